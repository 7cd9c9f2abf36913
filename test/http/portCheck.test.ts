/**
 * The port check before the start (src/http/portCheck.ts) and the HTTP server's own listen
 * (src/http/lifecycle/nodeServer.ts) name the setting of a port in use. The check only connects:
 * it never listens, so it cannot accept a client and then cut it.
 */
import { HttpServer } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as net from "node:net"
import { nodeServer } from "../../src/http/lifecycle/nodeServer.js"
import { ensurePortFree, PortUnavailable } from "../../src/http/portCheck.js"

/** A listener on a free port of 127.0.0.1, counting the connections it accepts. */
const listener = Effect.acquireRelease(
  Effect.async<{ server: net.Server; port: number; accepted: () => number }>((resume) => {
    let accepted = 0
    const server = net.createServer((socket) => {
      accepted++
      socket.destroy()
    })
    server.listen(
      0,
      "127.0.0.1",
      () =>
        resume(Effect.succeed({ server, port: (server.address() as net.AddressInfo).port, accepted: () => accepted }))
    )
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

/** A port nobody listens on: one that was free a moment ago. */
const freePort = Effect.scoped(Effect.map(listener, ({ port }) => port))

describe("the port check", () => {
  it.scoped("names the setting when something listens on the port", () =>
    Effect.gen(function*() {
      const held = yield* listener
      const error = yield* Effect.flip(ensurePortFree("SANDBOX_PORT", "127.0.0.1", held.port))
      expect(error).toBeInstanceOf(PortUnavailable)
      expect(error.message).toBe(
        `SANDBOX_PORT ${held.port} on 127.0.0.1 is in use (another instance of this service?): set SANDBOX_PORT to a free port`
      )
      // A wildcard host is checked on loopback.
      expect(Exit.isFailure(yield* Effect.exit(ensurePortFree("PORT", "0.0.0.0", held.port)))).toBe(true)
    }))

  it.effect("passes a free port without ever listening on it", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* ensurePortFree("PORT", "127.0.0.1", port)
      // Nothing listens there afterwards, and nothing listened during the check: a connection is refused.
      const refused = yield* Effect.async<boolean>((resume) => {
        const socket = net.connect(port, "127.0.0.1")
        socket.once("connect", () => (socket.destroy(), resume(Effect.succeed(false))))
        socket.once("error", () => resume(Effect.succeed(true)))
      })
      expect(refused).toBe(true)
      yield* ensurePortFree("PORT", "127.0.0.1", 0)
    }))

  it.scoped("the HTTP server's listen on a port taken after the check fails naming PORT", () =>
    Effect.gen(function*() {
      const held = yield* listener
      const exit = yield* Effect.exit(Effect.scoped(Layer.build(nodeServer("127.0.0.1", held.port))))
      expect(exit).toStrictEqual(Exit.fail(
        new PortUnavailable({
          message:
            `PORT ${held.port} on 127.0.0.1 is in use (another instance of this service?): set PORT to a free port`
        })
      ))
      const built = yield* Effect.exit(
        Effect.scoped(
          Effect.flatMap(
            Layer.build(nodeServer("127.0.0.1", 0)),
            (ctx) => Effect.succeed(ctx.unsafeMap.has(HttpServer.HttpServer.key))
          )
        )
      )
      expect(built).toStrictEqual(Exit.succeed(true))
    }))
})
