/**
 * A TCP proxy in front of the test PostgreSQL, so a test can take the database away from a running
 * server and give it back: `stop()` closes the port (new connections are refused) and cuts every
 * open connection, as a database that went down does; `resume()` listens on the same port again.
 */
import { Effect, type Scope } from "effect"
import * as net from "node:net"

export class DbProxy {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private port = 0
  private target: URL | undefined

  /** Starts the proxy in front of `databaseUrl` (for the scope) and returns the URL through it. */
  readonly front = (databaseUrl: string): Effect.Effect<string, never, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        this.target = new URL(databaseUrl)
        await this.listen()
        const url = new URL(databaseUrl)
        url.host = `127.0.0.1:${this.port}`
        return url.toString()
      }),
      () => Effect.promise(() => this.stop())
    )

  private listen = () =>
    new Promise<void>((resolve, reject) => {
      const target = this.target!
      const server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname)
        for (const socket of [client, upstream]) {
          this.sockets.add(socket)
          socket.on("close", () => this.sockets.delete(socket))
          socket.on("error", () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream).pipe(client)
      })
      server.once("error", reject)
      server.listen(this.port, "127.0.0.1", () => {
        const address = server.address()
        this.port = typeof address === "object" && address ? address.port : 0
        this.server = server
        resolve()
      })
    })

  /** The database goes down: the port refuses, every open connection is cut. */
  readonly stop = () =>
    new Promise<void>((resolve) => {
      const server = this.server
      this.server = undefined
      for (const socket of this.sockets) socket.destroy()
      if (server === undefined) return resolve()
      server.close(() => resolve())
    })

  /** The database is back, on the same port. */
  readonly resume = () => this.server === undefined ? this.listen() : Promise.resolve()
}
