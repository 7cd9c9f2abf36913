/**
 * An open-loop load generator: requests sent on a fixed schedule, whatever the server's answers,
 * and latency measured from each request's intended send time (bench/README.md, "Open loop").
 *
 * Request i is due at start + i / rate. A timer sends every due request on a pool of keep-alive
 * connections (node:http Agent, at most `connections` sockets); a request that finds every socket
 * busy waits in the agent's queue, and that wait counts in its latency. So a server that stalls
 * for 200 ms is charged the 200 ms by every request that should have been sent during the stall,
 * not by one request per connection as in a closed loop (coordinated omission). The generator's
 * own lateness (a busy runner) is reported as `sendLagMs`: it too counts in the latency, so a high
 * lag says the machine, not the server, added it.
 *
 * Why not autocannon's `overallRate`: autocannon 9 gives each connection a budget of requests per
 * second that it spends back to back when the second starts (lib/httpClient.js), so the offered
 * load is a burst each second, not a rate; and its coordinated-omission correction passes
 * `Math.ceil(1 / rate)` = 1 ms as the expected interval, which adds a made-up sample at every
 * millisecond below each latency instead of the requests that were held back.
 */
import * as http from "node:http"

export interface OpenLoopOptions {
  /** http://host:port */
  readonly base: string
  /** GET paths, used in turn (the same sequence on every server). */
  readonly paths: ReadonlyArray<string>
  readonly headers: Readonly<Record<string, string>>
  /** Request i in place of a GET of `paths` with `headers` (e.g. a POST with its body). */
  readonly request?: (i: number) => OpenLoopRequest
  /** Requests per second offered. */
  readonly rate: number
  readonly seconds: number
  /** Sockets at most; more requests than that in flight wait in the agent's queue (and it counts). */
  readonly connections: number
  /**
   * A request unanswered this long on its connection is given up, counted as a timeout and recorded
   * with the latency it had then (a lower bound: an overloaded server's p99 stays visible, not hidden).
   */
  readonly timeoutMs: number
}

export interface OpenLoopRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
}

export interface Percentiles {
  readonly p50: number
  readonly p90: number
  readonly p99: number
  readonly max: number
}

export interface OpenLoopResult {
  readonly offeredPerSecond: number
  /** Requests scheduled (rate x seconds) and sent. */
  readonly sent: number
  /** Answers with 2xx per second, from the first intended send to the last answer. */
  readonly achievedPerSecond: number
  /** Answers with a 2xx status. */
  readonly ok2xx: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  /** From the intended send time to the end of the answer (what a user of a steady stream feels); timeouts included. */
  readonly latencyMs: Percentiles
  /** From the moment the request was handed to the agent (what a closed-loop tool reports). */
  readonly fromSendMs: Percentiles
  /** How late the generator handed requests over, against their schedule. */
  readonly sendLagMs: Percentiles
  /** Most requests in flight at once (sockets in use plus the agent's queue). */
  readonly peakInFlight: number
  readonly connections: number
  /** Every answer 2xx and no connection error (timeouts are latency, and counted). */
  readonly ok: boolean
}

const round1 = (n: number) => Math.round(n * 10) / 10

/** Nearest-rank percentiles of the first `n` values (sorted in place). */
export const percentiles = (values: Float64Array, n: number): Percentiles => {
  if (n === 0) return { p50: 0, p90: 0, p99: 0, max: 0 }
  const sorted = values.subarray(0, n).sort()
  const at = (q: number) => round1(sorted[Math.max(0, Math.ceil(q * n) - 1)]!)
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: round1(sorted[n - 1]!) }
}

export const openLoop = (options: OpenLoopOptions): Promise<OpenLoopResult> =>
  new Promise((resolve) => {
    const url = new URL(options.base)
    const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
    const total = Math.max(1, Math.round(options.rate * options.seconds))
    const interval = 1000 / options.rate
    const latency = new Float64Array(total)
    const fromSend = new Float64Array(total)
    const lag = new Float64Array(total)
    let recorded = 0
    let ok2xx = 0
    let non2xx = 0
    let errors = 0
    let timeouts = 0
    let finished = 0
    let inFlight = 0
    let peakInFlight = 0
    let lastEnd = 0
    // A little lead so the first requests are not already late when the timer first runs.
    const start = performance.now() + 5

    const done = () => {
      agent.destroy()
      const elapsed = (lastEnd - start) / 1000
      resolve({
        offeredPerSecond: options.rate,
        sent: total,
        achievedPerSecond: elapsed > 0 ? round1(ok2xx / elapsed) : 0,
        ok2xx,
        non2xx,
        errors,
        timeouts,
        latencyMs: percentiles(latency, recorded),
        fromSendMs: percentiles(fromSend, recorded),
        sendLagMs: percentiles(lag, total),
        peakInFlight,
        connections: options.connections,
        ok: non2xx === 0 && errors === 0
      })
    }

    const settle = () => {
      inFlight--
      lastEnd = performance.now()
      if (++finished === total) done()
    }

    const fire = (i: number, intended: number) => {
      const sentAt = performance.now()
      lag[i] = sentAt - intended
      inFlight++
      if (inFlight > peakInFlight) peakInFlight = inFlight
      let settled = false
      const r = options.request?.(i) ??
        { method: "GET", path: options.paths[i % options.paths.length]!, headers: options.headers }
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: r.path,
        method: r.method,
        headers: r.body === undefined ? r.headers : { ...r.headers, "content-length": Buffer.byteLength(r.body) },
        agent
      }, (response) => {
        response.resume()
        response.on("end", () => {
          if (settled) return
          settled = true
          const end = performance.now()
          latency[recorded] = end - intended
          fromSend[recorded] = end - sentAt
          recorded++
          const status = response.statusCode ?? 0
          if (status >= 200 && status < 300) ok2xx++
          else non2xx++
          settle()
        })
      })
      request.setTimeout(options.timeoutMs, () => {
        if (settled) return
        settled = true
        timeouts++
        const end = performance.now()
        latency[recorded] = end - intended
        fromSend[recorded] = end - sentAt
        recorded++
        request.destroy()
        settle()
      })
      request.on("error", () => {
        if (settled) return
        settled = true
        errors++
        settle()
      })
      request.end(r.body)
    }

    let next = 0
    const tick = () => {
      const now = performance.now()
      while (next < total && start + next * interval <= now) {
        fire(next, start + next * interval)
        next++
      }
      if (next < total) setTimeout(tick, Math.max(0, start + next * interval - performance.now()))
    }
    setTimeout(tick, 5)
  })
