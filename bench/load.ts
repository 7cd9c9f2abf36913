/**
 * One autocannon measurement of one server with its CPU accounting (`npm run bench:sales`; the
 * shape of bench/tours.ts's measurement, shared here so later scenarios need not copy it): requests
 * per second (2xx answers over the wall time), latency percentiles, CPU ms per request of the
 * server's Node process and of its PostgreSQL backends (by application_name), how busy the machine
 * was and how much of it other processes used (bench/cpu.ts). The best of several attempts is the
 * quietest one (`measureQuietest`).
 */
import autocannon from "autocannon"
import { Effect } from "effect"
import type pg from "pg"
import { step } from "./children.js"
import {
  allProcesses,
  backendPids,
  cpuBetween,
  cpuByPid,
  cpuSeconds,
  machineCpu,
  NOISY_PERCENT,
  otherLoad,
  waitForQuiet
} from "./cpu.js"

export interface LoadTarget {
  readonly name: string
  readonly base: string
  readonly pid: number
  /** application_name of its PostgreSQL connections. */
  readonly applicationName: string
  /** This target's own request, instead of the options' (bench/mcp.ts: one server, a REST and an MCP request). */
  readonly request?: LoadRequest
}

/** What autocannon sends: GET `path` unless a method and body are given. */
export interface LoadRequest {
  readonly path: string
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
}

export interface LoadOptions extends LoadRequest {
  readonly connections: number
  readonly seconds: number
  /** The runner's pool, to find the target's backends. */
  readonly admin: pg.Pool
  readonly database: string
}

export interface Measurement {
  readonly target: string
  readonly connections: number
  readonly requestsPerSecond: number
  readonly latencyMs: {
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly average: number
    readonly max: number
  }
  readonly requests: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly ok: boolean
  readonly cpuMsPerRequest: { readonly node: number | null; readonly postgres: number | null }
  readonly machine: {
    readonly busyPercent: number
    readonly otherPercent: number
    readonly busiestOthers: ReadonlyArray<{ pid: number; name: string; percent: number }>
  } | null
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits
const now = () => performance.timeOrigin + performance.now()

/** autocannon's options for `target`: its own request, else the options' one. */
const cannon = (target: LoadTarget, options: Omit<LoadOptions, "admin" | "database">): autocannon.Options => {
  const request = target.request ?? options
  return {
    url: target.base + request.path,
    connections: options.connections,
    duration: options.seconds,
    timeout: 10,
    ...(request.method === undefined ? {} : { method: request.method }),
    ...(request.headers === undefined ? {} : { headers: request.headers }),
    ...(request.body === undefined ? {} : { body: request.body })
  }
}

/** autocannon against `target` for `seconds` (results discarded: a warmup). */
export const warm = (target: LoadTarget, options: Omit<LoadOptions, "admin" | "database">) =>
  Effect.promise(() => autocannon(cannon(target, options))).pipe(Effect.asVoid)

export const measureLoad = (target: LoadTarget, options: LoadOptions) =>
  Effect.gen(function*() {
    const pg0 = cpuByPid(yield* backendPids(options.admin, options.database, target.applicationName))
    const node0 = cpuSeconds(target.pid)
    const machine0 = machineCpu()
    const procs0 = allProcesses()
    const t0 = now()
    const result = yield* Effect.promise(() => autocannon(cannon(target, options)))
    const t1 = now()
    const machine1 = machineCpu()
    const procs1 = allProcesses()
    const node1 = cpuSeconds(target.pid)
    const pg1 = cpuByPid(yield* backendPids(options.admin, options.database, target.applicationName))
    const requests = result["2xx"] + result.non2xx
    const perRequest = (s: number | null) => (s === null || requests === 0 ? null : round(s * 1000 / requests, 3))
    const busy = machine0 && machine1 ? machine1.busy - machine0.busy : null
    const wall = machine0 && machine1 ? machine1.total - machine0.total : null
    const ours = new Set([process.pid, target.pid, ...pg0.keys(), ...pg1.keys()])
    return {
      target: target.name,
      connections: options.connections,
      requestsPerSecond: round(result["2xx"] / ((t1 - t0) / 1000), 1),
      latencyMs: {
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        average: round(result.latency.average, 2),
        max: result.latency.max
      },
      requests,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      ok: result.non2xx === 0 && result.errors === 0 && result.timeouts === 0 && result["2xx"] > 0,
      cpuMsPerRequest: {
        node: perRequest(node0 === null || node1 === null ? null : node1 - node0),
        postgres: perRequest(cpuBetween(pg0, pg1))
      },
      machine: busy === null || wall === null ? null : (() => {
        const other = otherLoad(procs0, procs1, ours, wall)
        return { busyPercent: round(busy / wall * 100), otherPercent: other.percent, busiestOthers: other.busiest }
      })()
    } satisfies Measurement
  })

/**
 * The targets measured in turn (each after its warmup and a pause), repeated up to `retries` times
 * while other processes used more than NOISY_PERCENT of the CPUs; the quietest attempt is kept.
 */
export const measureQuietest = (
  targets: ReadonlyArray<LoadTarget>,
  options: LoadOptions & { readonly warmup: number; readonly retries: number; readonly quietTimeout: number },
  label: string
) =>
  Effect.gen(function*() {
    let best: Array<Measurement> = []
    let bestNoise = Infinity
    for (let attempt = 0; attempt <= options.retries; attempt++) {
      yield* waitForQuiet(options.quietTimeout)
      const results: Array<Measurement> = []
      for (const target of targets) {
        yield* step(`${label} -> ${target.name} (${options.warmup} s warmup + ${options.seconds} s)`)
        if (options.warmup > 0) {
          yield* warm(target, { ...options, seconds: options.warmup })
          yield* Effect.sleep("1 second")
        }
        const m = yield* measureLoad(target, options)
        results.push(m)
        yield* step(
          `  ${m.requestsPerSecond} req/s, p50 ${m.latencyMs.p50} ms, p99 ${m.latencyMs.p99} ms, ` +
            `${m.non2xx} non-2xx, ${m.errors} errors; CPU ms/req node ${m.cpuMsPerRequest.node} pg ${m.cpuMsPerRequest.postgres}; ` +
            `machine ${m.machine?.busyPercent ?? "?"}% busy, others ${m.machine?.otherPercent ?? "?"}%`
        )
        yield* Effect.sleep("1 second")
      }
      const noise = Math.max(...results.map((m) => m.machine?.otherPercent ?? 0))
      if (noise < bestNoise) {
        bestNoise = noise
        best = results
      }
      if (noise <= NOISY_PERCENT) break
      if (attempt < options.retries) {
        yield* step(`  other processes used ${noise.toFixed(0)}% of the CPUs: measuring again`)
      }
    }
    return best
  })
