/** The HTTP server every sandbox listens with: loopback by default, any free port with 0. */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect } from "effect"
import { createServer } from "node:http"

export interface SandboxOptions {
  /** Port to listen on; 0 (the default) picks a free one. */
  readonly port?: number
  /** Default 127.0.0.1. */
  readonly host?: string
}

/** Starts listening for the scope; answers the server (to `serve` an app on) and its base URL. */
export const listen = (options: SandboxOptions) =>
  Effect.gen(function*() {
    const node = createServer()
    const server = yield* NodeHttpServer.make(() => node, {
      port: options.port ?? 0,
      host: options.host ?? "127.0.0.1"
    })
    // Runs before the server's own close: hanging requests would keep it open.
    yield* Effect.addFinalizer(() => Effect.sync(() => node.closeAllConnections()))
    const port = server.address._tag === "TcpAddress" ? server.address.port : 0
    const host = options.host && options.host !== "0.0.0.0" ? options.host : "127.0.0.1"
    return { server, port, baseUrl: `http://${host}:${port}` }
  })
