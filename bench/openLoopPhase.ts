/**
 * `npm run bench`'s open-loop phase (bench/README.md, "Open loop"): one server at a fixed offered
 * rate (bench/openLoop.ts) with its resident memory sampled (bench/memory.ts), its Node CPU per
 * request and the machine's load; and the table of the phase.
 */
import { Effect } from "effect"
import { allProcesses, cpuSeconds, machineCpu, NOISY_PERCENT, otherLoad } from "./cpu.js"
import { withPeakRss } from "./memory.js"
import { openLoop, type OpenLoopOptions, type OpenLoopResult } from "./openLoop.js"

/** Share of the floor's closed-loop (saturation) throughput offered to both servers. */
export const OPEN_LOOP_SHARE = 0.5

/** Below this share of the offered rate, the table says the rate was not achieved. */
const ACHIEVED_SHARE = 0.95

export interface OpenLoopTarget {
  readonly name: string
  readonly base: string
  readonly pid: number
}

export interface OpenLoopMeasurement extends OpenLoopResult {
  /** Peak VmRSS of the server during the run, MiB. */
  readonly rssPeakMb: number | null
  readonly cpuMsPerRequest: { readonly node: number | null }
  readonly machine: { readonly busyPercent: number; readonly otherPercent: number } | null
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits

export const measureOpenLoop = (target: OpenLoopTarget, options: Omit<OpenLoopOptions, "base">) =>
  Effect.gen(function*() {
    const node0 = cpuSeconds(target.pid)
    const machine0 = machineCpu()
    const procs0 = allProcesses()
    const [result, rssPeakMb] = yield* withPeakRss(
      target.pid,
      Effect.promise(() => openLoop({ ...options, base: target.base }))
    )
    const node1 = cpuSeconds(target.pid)
    const machine1 = machineCpu()
    const procs1 = allProcesses()
    const answered = result.sent - result.errors - result.timeouts
    const busy = machine0 && machine1 ? machine1.busy - machine0.busy : null
    const wall = machine0 && machine1 ? machine1.total - machine0.total : null
    return {
      ...result,
      rssPeakMb,
      cpuMsPerRequest: {
        node: node0 === null || node1 === null || answered === 0 ? null : round((node1 - node0) * 1000 / answered, 3)
      },
      machine: busy === null || wall === null ? null : {
        busyPercent: round(busy / wall * 100, 1),
        otherPercent: otherLoad(procs0, procs1, new Set([process.pid, target.pid]), wall).percent
      }
    } satisfies OpenLoopMeasurement
  })

/** One line of the open-loop table. */
export interface OpenLoopLine {
  readonly name: string
  readonly offeredPerSecond: number
  readonly service: OpenLoopMeasurement
  readonly floor: OpenLoopMeasurement
  readonly p99TargetMs: number | null
  readonly p99Met: boolean | null
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const lpad = (s: string, n: number) => (s.length >= n ? s : " ".repeat(n - s.length) + s)

const failures = (m: OpenLoopMeasurement) => m.ok ? "" : `${m.non2xx} non-2xx/${m.errors} errors`

const verdict = (line: OpenLoopLine) => {
  const broken = [
    failures(line.service) && `service ${failures(line.service)}`,
    failures(line.floor) && `floor ${failures(line.floor)}`
  ].filter(Boolean)
  if (broken.length > 0) return `FAILED (${broken.join(", ")})`
  const slow = [line.service, line.floor].filter((m) => m.achievedPerSecond < line.offeredPerSecond * ACHIEVED_SHARE)
    .length > 0
  const target = line.p99Met === null
    ? "no target"
    : `p99 < ${line.p99TargetMs} ms ${line.p99Met ? "ok" : "MISSED"}`
  const other = Math.max(line.service.machine?.otherPercent ?? 0, line.floor.machine?.otherPercent ?? 0)
  const gaveUp = [
    line.service.timeouts > 0 ? `service ${line.service.timeouts}` : "",
    line.floor.timeouts > 0 ? `floor ${line.floor.timeouts}` : ""
  ].filter(Boolean)
  const noisy = other > NOISY_PERCENT ? ` [noisy: other processes used ${other.toFixed(0)}% of the CPUs]` : ""
  return (slow ? `${target}, offered rate NOT achieved` : target) +
    (gaveUp.length > 0 ? `, timeouts (counted as latency): ${gaveUp.join(", ")}` : "") + noisy
}

export const openLoopTable = (lines: ReadonlyArray<OpenLoopLine>, connections: number) => {
  const header = [
    pad("open loop", 26),
    lpad("offered/s", 9),
    lpad("service got/s", 13),
    lpad("p50", 6),
    lpad("p99", 6),
    lpad("max", 6),
    lpad("floor got/s", 11),
    lpad("p50", 6),
    lpad("p99", 6),
    lpad("max", 6),
    "  targets"
  ].join(" ")
  const out = [header, "-".repeat(header.length + 16)]
  const f = (n: number) => n.toFixed(1)
  for (const l of lines) {
    out.push([
      pad(l.name, 26),
      lpad(String(l.offeredPerSecond), 9),
      lpad(f(l.service.achievedPerSecond), 13),
      lpad(f(l.service.latencyMs.p50), 6),
      lpad(f(l.service.latencyMs.p99), 6),
      lpad(f(l.service.latencyMs.max), 6),
      lpad(f(l.floor.achievedPerSecond), 11),
      lpad(f(l.floor.latencyMs.p50), 6),
      lpad(f(l.floor.latencyMs.p99), 6),
      lpad(f(l.floor.latencyMs.max), 6),
      "  " + verdict(l)
    ].join(" "))
  }
  out.push(
    "",
    `latency in ms from each request's intended send time; offered: ${OPEN_LOOP_SHARE} of the floor's closed-loop ` +
      `req/s of this run; up to ${connections} connections`,
    `generator lateness p99 (ms), service | floor: ${
      lines.map((l) => `${l.name} ${f(l.service.sendLagMs.p99)} | ${f(l.floor.sendLagMs.p99)}`).join("; ")
    }`
  )
  return out.join("\n")
}
