/**
 * CPU accounting for the benchmarks, from /proc: a process's CPU time, PostgreSQL backends by
 * application name, the whole machine, and the load of processes outside the benchmark (other
 * people's jobs), with a wait for a quiet machine before measuring.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type pg from "pg"
import { step } from "./children.js"
import { DATA_DIR } from "./settings.js"

/** A measurement during which other processes used more than this share of the CPUs is flagged. */
export const NOISY_PERCENT = 10

const CLOCK_TICKS_PER_SECOND = 100

/** user + system CPU seconds of a process, from /proc (null where /proc or the process is not there). */
export const cpuSeconds = (pid: number): number | null => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
  } catch {
    return null
  }
}

export const backendPids = (admin: pg.Pool, database: string, applicationName: string) =>
  Effect.promise(() =>
    admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2",
      [database, applicationName]
    ).then((r) => r.rows.map((row) => row.pid))
  )

/** Busy and total CPU seconds of the whole machine, from /proc/stat (null where absent). */
export const machineCpu = (): { busy: number; total: number } | null => {
  try {
    const line = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number)
    const total = v.reduce((a, b) => a + b, 0)
    const idle = v[3]! + v[4]!
    return { busy: (total - idle) / CLOCK_TICKS_PER_SECOND, total: total / CLOCK_TICKS_PER_SECOND }
  } catch {
    return null
  }
}

/** CPU seconds of every process on the machine, with its name and parent. */
export const allProcesses = () => {
  const out = new Map<number, { name: string; ppid: number; seconds: number }>()
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e))
  } catch {
    return out
  }
  for (const e of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, "utf8")
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      out.set(Number(e), {
        name,
        ppid: Number(fields[1]),
        seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
      })
    } catch { /* gone */ }
  }
  return out
}

/** The postmaster of the embedded PostgreSQL (its children are part of the workload), if any. */
const embeddedPostmaster = () => {
  try {
    return Number(fs.readFileSync(path.join(DATA_DIR, "pg", "postmaster.pid"), "utf8").split("\n")[0])
  } catch {
    return undefined
  }
}

/**
 * CPU used by processes that are not part of the benchmark (anything but `ours`, e.g. the runner
 * and the servers under test, and our embedded PostgreSQL), in percent of all CPUs, with the
 * busiest of them.
 */
export const otherLoad = (
  before: ReturnType<typeof allProcesses>,
  after: ReturnType<typeof allProcesses>,
  ours: ReadonlySet<number>,
  wall: number
) => {
  const postmaster = embeddedPostmaster()
  const others = [...after]
    .filter(([pid, p]) => !ours.has(pid) && pid !== postmaster && p.ppid !== postmaster)
    .map(([pid, p]) => ({ pid, name: p.name, percent: (p.seconds - (before.get(pid)?.seconds ?? 0)) / wall * 100 }))
  const round = (n: number) => Math.round(n * 10) / 10
  return {
    percent: round(others.reduce((sum, p) => sum + p.percent, 0)),
    busiest: others.filter((p) => p.percent >= 1).sort((a, b) => b.percent - a.percent).slice(0, 5)
      .map((p) => ({ ...p, percent: round(p.percent) }))
  }
}

/**
 * Waits (up to `timeoutSeconds`) until the machine is quiet: less than NOISY_PERCENT busy over a
 * second while our servers idle, so a measurement does not start on top of someone else's job.
 */
export const waitForQuiet = (timeoutSeconds: number) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutSeconds * 1000
    let announced = false
    while (true) {
      const a = machineCpu()
      yield* Effect.sleep("1 second")
      const b = machineCpu()
      if (!a || !b) return
      const busy = (b.busy - a.busy) / (b.total - a.total) * 100
      if (busy < NOISY_PERCENT) return
      if (Date.now() > deadline) {
        yield* step(`  the machine is still ${busy.toFixed(0)}% busy with other work; measuring anyway`)
        return
      }
      if (!announced) {
        yield* step(
          `  the machine is ${
            busy.toFixed(0)
          }% busy with other work; waiting up to ${timeoutSeconds} s for it to settle`
        )
        announced = true
      }
    }
  })

/** CPU seconds per backend pid, for the pids alive now. */
export const cpuByPid = (pids: ReadonlyArray<number>) => {
  const out = new Map<number, number>()
  for (const pid of pids) {
    const s = cpuSeconds(pid)
    if (s !== null) out.set(pid, s)
  }
  return out
}

/** CPU used between two snapshots, counting backends that started in between from zero. */
export const cpuBetween = (before: Map<number, number>, after: Map<number, number>) => {
  if (after.size === 0) return null
  let total = 0
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0)
  return total
}
