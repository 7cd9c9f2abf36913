/**
 * SIGTERM on the real service process (issue 17, defect 1): /readyz fails at once while /healthz
 * holds, the listener closes, a request in flight and requests sent afterwards on open keep-alive
 * connections are answered with `Connection: close`, and the process exits, the shutdown bounded by
 * SHUTDOWN_TIMEOUT even when the database stops answering.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { createDatabase } from "../../src/db/embedded.js"
import { connection, getRequest, listenerClosed, startService, tail } from "../support/serviceProcess.js"
import { tcpProxy } from "../support/tcpProxy.js"

const database = (name: string) =>
  Effect.runPromise(createDatabase(inject("adminDatabaseUrl"), `${name}_${Date.now().toString(36)}`))

describe("shutdown on SIGTERM", () => {
  it("answers every accepted request, closes keep-alive connections, fails /readyz first, and exits", async () => {
    const service = await startService(await database("life_sigterm"), { SHUTDOWN_TIMEOUT: "30" })
    // Three keep-alive connections, each used once already.
    const [inFlight, idleA, idleB] = await Promise.all([1, 2, 3].map(() => connection(service.port)))
    for (const c of [inFlight!, idleA!, idleB!]) {
      c.send(getRequest("/healthz"))
      expect((await c.answer()).headers["connection"]).toBe("keep-alive")
    }
    // A request in flight when the signal comes: its body is half sent.
    const body = JSON.stringify({ site: "none", events: [] })
    inFlight!.send(
      `POST /api/v1/collect HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${
        body.slice(0, 10)
      }`
    )

    service.child.kill("SIGTERM")
    await listenerClosed(service.port)

    // Requests sent after the signal on connections that were open: answered, then closed.
    idleA!.send(getRequest("/readyz"))
    idleB!.send(getRequest("/healthz"))
    const [readyz, healthz] = await Promise.all([idleA!.answer(), idleB!.answer()])
    expect(readyz.status, tail(service.output)).toBe(503)
    expect(readyz.headers["connection"]).toBe("close")
    expect(healthz.status).toBe(200)
    expect(healthz.headers["connection"]).toBe("close")
    // The request in flight finishes once its body does.
    inFlight!.send(body.slice(10))
    const collected = await inFlight!.answer()
    expect(collected.status).toBeGreaterThanOrEqual(200)
    expect(collected.status).toBeLessThan(500)
    expect(collected.headers["connection"]).toBe("close")
    await Promise.all([inFlight!.closed, idleA!.closed, idleB!.closed])

    expect(await service.exited(), tail(service.output)).toBe(0)
    expect(service.output()).toContain("SIGTERM: shutting down")
    expect(service.output()).not.toContain("SHUTDOWN_TIMEOUT")
  }, 240_000)

  it("exits by SHUTDOWN_TIMEOUT when the database stops answering", async () => {
    const url = new URL(await database("life_dbdown"))
    const proxy = await tcpProxy(Number(url.port))
    url.port = String(proxy.port)
    const service = await startService(url.toString(), { SHUTDOWN_TIMEOUT: "3" })
    // The database goes silent: connections open, nothing answered (as a host that fell off the network).
    proxy.freeze()
    const probe = await connection(service.port)
    probe.send(getRequest("/readyz"))
    expect((await probe.answer()).status).toBe(503) // the probe's own 2 s deadline
    service.child.kill("SIGTERM")
    expect(await service.exited(), tail(service.output)).toBe(1)
    expect(service.output()).toContain("shutdown did not end within 3s (SHUTDOWN_TIMEOUT): exiting")
    proxy.close()
  }, 240_000)
})
