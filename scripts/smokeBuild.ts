/**
 * Smoke test of the production build (CI runs it after `npm run build`): starts `node dist/main.js
 * serve` on the embedded database with demo data in a fresh DATA_DIR, waits for /readyz, reads the
 * bookings with a demo key from DATA_DIR/demo.json, sends SIGTERM and checks the process exits 0
 * within the shutdown budget. Prints the time to ready and the service process's RSS.
 *
 * Use: npx tsx scripts/smokeBuild.ts [node arguments…]   (default: dist/main.js serve)
 *   e.g. npx tsx scripts/smokeBuild.ts --import tsx src/main.ts serve   (the same check on the sources)
 * SMOKE_DATA_DIR reuses a data folder (a warm start: no initdb, no seeding); otherwise a temporary
 * one is made and removed. SMOKE_PORT fixes the HTTP port (default: a free one in 20000-32000).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { DemoFile } from "../src/demo/seed.js"
import { freeFixedPort } from "../test/support/globalSetup.js"

// A first start initialises the embedded database and seeds the demo: minutes on a busy machine.
const READY_WITHIN_MS = 300_000
// Each request gets its own deadline: a connection that is never answered must not stall the check.
const REQUEST_MS = 10_000
// The service's own shutdown deadline (SHUTDOWN_TIMEOUT, 25 s by default) plus room to exit.
const EXIT_WITHIN_MS = 35_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const fail = (message: string) => {
  console.error(`smoke-build: FAILED: ${message}`)
  process.exitCode = 1
}

const rssMb = (pid: number) => {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN)
  return Math.round(kb / 1024)
}

const args = process.argv.length > 2 ? process.argv.slice(2) : ["dist/main.js", "serve"]
const ownDataDir = process.env.SMOKE_DATA_DIR === undefined
const dataDir = process.env.SMOKE_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), "smoke-build-"))
const port = Number(process.env.SMOKE_PORT ?? (await freeFixedPort()))
const pgPort = await freeFixedPort()
const base = `http://127.0.0.1:${port}`

const env: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: String(port),
  EMBEDDED_PG_PORT: String(pgPort),
  SANDBOX_PORT: "0",
  DATA_DIR: dataDir
}
delete env.DATABASE_URL
delete env.CLUSTER_PORT
const output: Array<Buffer> = []
const started = Date.now()
const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] })
child.stdout.on("data", (chunk) => output.push(chunk))
child.stderr.on("data", (chunk) => output.push(chunk))
interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}
const exited = new Promise<Exit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })))
let exit: Exit | void = undefined

try {
  console.log(`smoke-build: node ${args.join(" ")} on port ${port}, DATA_DIR ${dataDir}`)
  let ready = false
  while (!ready && Date.now() - started < READY_WITHIN_MS) {
    exit = await Promise.race([exited, sleep(200)])
    if (exit) throw new Error(`the service exited before it was ready (${JSON.stringify(exit)})`)
    ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(REQUEST_MS) }).then(
      (r) => r.status === 200,
      () => false
    )
  }
  if (!ready) throw new Error(`/readyz did not answer 200 within ${READY_WITHIN_MS / 1000} s`)
  console.log(`smoke-build: ready in ${((Date.now() - started) / 1000).toFixed(2)} s, RSS ${rssMb(child.pid!)} MB`)

  const demo = JSON.parse(fs.readFileSync(path.join(dataDir, "demo.json"), "utf8")) as DemoFile
  const key = demo.keys.find((k) => k.state === "active" && k.scopes.includes("bookings:read"))
  if (!key) throw new Error("no active demo key with bookings:read in demo.json")
  const res = await fetch(`${base}/api/v1/bookings?limit=1`, {
    headers: { authorization: `Bearer ${key.secret}` },
    signal: AbortSignal.timeout(REQUEST_MS)
  })
  const body = (await res.json()) as { data?: unknown }
  if (res.status !== 200 || !Array.isArray(body.data)) {
    throw new Error(`GET /api/v1/bookings answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
  }
  console.log(`smoke-build: GET /api/v1/bookings with a demo key: 200, ${body.data.length} booking(s)`)

  const termAt = Date.now()
  child.kill("SIGTERM")
  exit = await Promise.race([exited, sleep(EXIT_WITHIN_MS)])
  if (!exit) throw new Error(`still running ${EXIT_WITHIN_MS / 1000} s after SIGTERM`)
  if (exit.code !== 0) throw new Error(`exited with ${JSON.stringify(exit)} after SIGTERM, not 0`)
  console.log(`smoke-build: exited 0 ${((Date.now() - termAt) / 1000).toFixed(2)} s after SIGTERM`)
} catch (error) {
  fail(error instanceof Error ? error.message : String(error))
  console.error(Buffer.concat(output).toString("utf8").split("\n").slice(-40).join("\n"))
} finally {
  if (!exit) {
    // A failed check still stops the service the way that lets it stop its embedded PostgreSQL.
    child.kill("SIGTERM")
    if (!(await Promise.race([exited, sleep(EXIT_WITHIN_MS)]))) {
      child.kill("SIGKILL")
      await exited
    }
  }
  if (ownDataDir) fs.rmSync(dataDir, { recursive: true, force: true })
}
