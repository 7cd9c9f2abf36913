/**
 * The runner's side of bench/collectLoad.ts: starts it as a child process (`node --import tsx`),
 * waits for its result and measures its CPU; and the service's own times of a path from the
 * bench/httpTiming.ts records written during the load.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import type { CollectLoadOptions } from "./collectLoad.js"
import { cpuSeconds } from "./cpu.js"
import type { OpenLoopResult } from "./openLoop.js"
import { percentiles } from "./openLoop.js"
import { PROJECT_DIR } from "./settings.js"

export const runCollectLoad = (options: CollectLoadOptions) =>
  Effect.async<{ result: OpenLoopResult; pid: number; cpuMs: number }, Error>((resume) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/collectLoad.ts", JSON.stringify(options)], {
      cwd: PROJECT_DIR,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    let cpu: number | null = null
    child.stdout.on("data", (d) => (out += d))
    // The CPU it used, read just before it exits (its result line is written by then).
    child.stdout.on("end", () => (cpu = cpuSeconds(child.pid!)))
    child.on("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? ""
      if (code !== 0) return resume(Effect.fail(new Error(`bench/collectLoad.ts exited with ${code}: ${out}`)))
      resume(Effect.succeed({ result: JSON.parse(last) as OpenLoopResult, pid: child.pid!, cpuMs: (cpu ?? 0) * 1000 }))
    })
    return Effect.sync(() => child.kill())
  })

/** p50/p90/p99/max of the service's own time for `path` over the records after byte `from` of `file`. */
export const serverTimes = (file: string, from: number, path: string) => {
  const text = fs.readFileSync(file).subarray(from).toString("utf8")
  const ds: Array<number> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const r = JSON.parse(line) as { k: string; u: string; d: number }
    if (r.k === "server" && r.u === path) ds.push(r.d)
  }
  return { requests: ds.length, ...percentiles(Float64Array.from(ds), ds.length) }
}
