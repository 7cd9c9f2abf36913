/**
 * Resident memory of the servers under test, from /proc/<pid>/status: VmRSS sampled while an
 * effect runs (its peak), and VmHWM, the kernel's high-water mark of the process's whole life.
 */
import { Effect } from "effect"
import * as fs from "node:fs"

/** How often the resident set is read while a load runs. */
const SAMPLE_EVERY_MS = 100

/** A field of /proc/<pid>/status in MiB (the kernel gives kB); null where /proc or the process is not there. */
const statusMb = (pid: number, field: "VmRSS" | "VmHWM"): number | null => {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Math.round(Number(match[1]) / 1024 * 10) / 10 : null
  } catch {
    return null
  }
}

export const rssMb = (pid: number) => statusMb(pid, "VmRSS")

/**
 * The most the process has ever held resident (startup included), as the kernel keeps it: updated
 * lazily, so it can trail a sampled VmRSS by a few pages, but it sees peaks between samples.
 */
export const highWaterMb = (pid: number) => statusMb(pid, "VmHWM")

/** Runs `self` while reading `pid`'s resident set every 100 ms; gives its result and the peak seen (MiB). */
export const withPeakRss = <A, E, R>(pid: number, self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let peak: number | null = null
    const sample = () => {
      const mb = rssMb(pid)
      if (mb !== null && (peak === null || mb > peak)) peak = mb
    }
    const timer = yield* Effect.sync(() => {
      sample()
      return setInterval(sample, SAMPLE_EVERY_MS)
    })
    const result = yield* self.pipe(Effect.ensuring(Effect.sync(() => clearInterval(timer))))
    sample()
    return [result, peak as number | null] as const
  })

/** The larger of two figures, either possibly missing. */
export const maxMb = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b))
