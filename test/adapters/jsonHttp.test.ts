/**
 * The adapters' shared HTTP exchange (src/adapters/jsonHttp.ts) and interruption: its own deadline
 * always cuts it, also inside an uninterruptible caller (the Partner API's database routes); the
 * caller's interruption (a client that hung up) never cuts a call half-way in an uninterruptible
 * caller: the answer is read and the work after it runs. Against a bare node:http server.
 */
import { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { makeJsonHttp } from "../../src/adapters/jsonHttp.js"

class Unavailable {
  constructor(readonly reason: string) {}
}

/** A server that answers `{ok: true}` after `?delay=` ms (never, for a negative delay); counts the answers it finished. */
const slowServer = Effect.gen(function*() {
  let answered = 0
  const server = createServer((req, res) => {
    const delay = Number(new URL(req.url ?? "/", "http://x").searchParams.get("delay") ?? "0")
    if (delay < 0) return
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ ok: true }), () => answered++)
    }, delay)
  })
  yield* Effect.acquireRelease(
    Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))),
    () =>
      Effect.sync(() => {
        server.closeAllConnections()
        server.close()
      })
  )
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answered: () => answered }
})

const jsonHttp = Effect.map(
  HttpClient.HttpClient,
  (client) =>
    makeJsonHttp<Unavailable>(client, "Test", { timeout: "400 millis", retries: 0, retryBase: "10 millis" }, {
      unavailable: (_op, reason) => new Unavailable(reason),
      isUnavailable: () => true,
      reasonOf: (e) => e.reason,
      tagOf: () => "Unavailable"
    }, [])
)

layer(NodeHttpClient.layerUndici, { excludeTestServices: true })(
  "the adapters' HTTP exchange and interruption",
  (it) => {
    it.scoped("its deadline cuts a call to a system that never answers, also in an uninterruptible caller", () =>
      Effect.gen(function*() {
        const server = yield* slowServer
        const http = yield* jsonHttp
        const started = Date.now()
        const error = yield* Effect.flip(
          Effect.uninterruptible(
            http.send({ operation: "hang", method: "GET", url: `${server.base}/?delay=-1`, headers: {} })
          )
        )
        expect(error).toBeInstanceOf(Unavailable)
        expect(error.reason).toBe("timeout")
        expect(Date.now() - started).toBeLessThan(3_000)
      }))

    it.scoped("a caller interrupted mid-call: an uninterruptible caller gets the answer and carries on", () =>
      Effect.gen(function*() {
        const server = yield* slowServer
        const http = yield* jsonHttp
        const after = yield* Ref.make<number | null>(null)
        const caller = yield* Effect.fork(Effect.uninterruptible(
          http.send({ operation: "slow", method: "POST", url: `${server.base}/?delay=200`, headers: {}, body: {} })
            .pipe(
              Effect.flatMap((answer) => Ref.set(after, answer.status))
            )
        ))
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(caller)
        expect(yield* Ref.get(after)).toBe(200)
        expect(server.answered()).toBe(1)
      }))

    it.scoped("an interruptible caller interrupted mid-call stops waiting at once", () =>
      Effect.gen(function*() {
        const server = yield* slowServer
        const http = yield* jsonHttp
        const after = yield* Ref.make<number | null>(null)
        const caller = yield* Effect.fork(
          http.send({ operation: "slow", method: "GET", url: `${server.base}/?delay=300`, headers: {} }).pipe(
            Effect.flatMap((answer) => Ref.set(after, answer.status))
          )
        )
        yield* Effect.sleep("50 millis")
        const started = Date.now()
        yield* Fiber.interrupt(caller)
        expect(Date.now() - started).toBeLessThan(250)
        expect(yield* Ref.get(after)).toBeNull()
      }))
  }
)
