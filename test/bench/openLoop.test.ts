/**
 * The benchmark's open-loop generator (bench/openLoop.ts) and resident-memory sampler
 * (bench/memory.ts) against a local node:http server: requests keep to their schedule while the
 * server holds its answers, the held time is charged to every request that was due during the
 * hold (no coordinated omission), paths are used in turn with the given headers, and 5xx answers,
 * broken connections and unanswered requests are counted. Only lower bounds on latency are
 * asserted (a slow machine can only add to them).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { highWaterMb, rssMb, withPeakRss } from "../../bench/memory.js"
import { openLoop, percentiles } from "../../bench/openLoop.js"

/** A server on a free loopback port; `handle` answers each request. */
const serve = async (handle: http.RequestListener) => {
  const server = http.createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { base, close }
}

describe("openLoop", () => {
  it("keeps to its schedule while the server holds answers, and charges the hold to every request due in it", async () => {
    const HOLD_MS = 300
    const seen: Array<{ path: string; auth: string | undefined }> = []
    let holdUntil = 0
    const { base, close } = await serve((req, res) => {
      seen.push({ path: req.url!, auth: req.headers.authorization })
      // From the 40th request on, every answer waits until HOLD_MS after that request arrived.
      if (seen.length === 40) holdUntil = Date.now() + HOLD_MS
      const wait = Math.max(0, holdUntil - Date.now())
      setTimeout(() => res.end("ok"), wait)
    })
    try {
      const result = await openLoop({
        base,
        paths: ["/a", "/b", "/c"],
        headers: { authorization: "Bearer k" },
        rate: 200,
        seconds: 1.5,
        connections: 64,
        timeoutMs: 10_000
      })
      expect(result).toMatchObject({ offeredPerSecond: 200, sent: 300, non2xx: 0, errors: 0, timeouts: 0, ok: true })
      expect(seen).toHaveLength(300)
      // Paths in turn (they may arrive out of order: requests share several connections).
      for (const path of ["/a", "/b", "/c"]) expect(seen.filter((s) => s.path === path)).toHaveLength(100)
      expect(seen.every((s) => s.auth === "Bearer k")).toBe(true)
      // The request that started the hold waited all of it, counted from when it was due.
      expect(result.latencyMs.max).toBeGreaterThanOrEqual(HOLD_MS - 5)
      // Requests kept going out during the hold (a closed loop of 1 connection would have sent none),
      // so more than one connection was in use: about 60 requests were due in those 300 ms.
      expect(result.peakInFlight).toBeGreaterThanOrEqual(20)
      // At 200/s, 40 requests are due in the first 200 ms of the hold, each waiting at least 100 ms:
      // more than 1% of 300, so the p99 carries the hold.
      expect(result.latencyMs.p99).toBeGreaterThanOrEqual(100)
    } finally {
      await close()
    }
  })

  it("counts 5xx answers and broken connections (then not ok), and unanswered requests as timeouts with their latency", async () => {
    const { base, close } = await serve((req, res) => {
      if (req.url === "/busy") {
        res.statusCode = 503
        res.end()
      } else if (req.url === "/boom") {
        req.socket.destroy()
      } else if (req.url !== "/silent") {
        res.end("ok")
      }
    })
    try {
      const mixed = await openLoop({
        base,
        paths: ["/ok", "/busy", "/boom"],
        headers: {},
        rate: 100,
        seconds: 0.3,
        connections: 8,
        timeoutMs: 5_000
      })
      expect(mixed).toMatchObject({ sent: 30, non2xx: 10, errors: 10, timeouts: 0, ok: false })
      const silent = await openLoop({
        base,
        paths: ["/silent"],
        headers: {},
        rate: 20,
        seconds: 0.1,
        connections: 2,
        timeoutMs: 200
      })
      // Timeouts are latency (at least the time given up after), not failures.
      expect(silent).toMatchObject({ sent: 2, timeouts: 2, non2xx: 0, errors: 0, ok: true })
      expect(silent.latencyMs.max).toBeGreaterThanOrEqual(200)
    } finally {
      await close()
    }
  })

  it("percentiles are nearest-rank", () => {
    const values = Float64Array.from({ length: 200 }, (_, i) => 200 - i)
    expect(percentiles(values, 200)).toEqual({ p50: 100, p90: 180, p99: 198, max: 200 })
    expect(percentiles(new Float64Array(4), 0)).toEqual({ p50: 0, p90: 0, p99: 0, max: 0 })
  })
})

describe("memory", () => {
  it.live("reads a process's resident set, its peak while an effect runs, and its high-water mark", () =>
    Effect.gen(function*() {
      const held: Array<Buffer> = []
      const before = rssMb(process.pid)!
      const [value, peak] = yield* withPeakRss(
        process.pid,
        Effect.sync(() => {
          // 64 MiB written, so resident: the peak must see it.
          for (let i = 0; i < 64; i++) held.push(Buffer.alloc(1024 * 1024, 1))
          return rssMb(process.pid)
        }).pipe(Effect.zipLeft(Effect.sleep("250 millis")))
      )
      expect(value! - before).toBeGreaterThan(60)
      expect(peak! - before).toBeGreaterThan(60)
      // The kernel updates the high-water mark lazily: it may trail a sample by a few pages.
      expect(highWaterMb(process.pid)).toBeGreaterThan(64)
      expect(held).toHaveLength(64)
      expect(rssMb(2 ** 22 + 12345)).toBeNull()
    }))
})
