/**
 * Starts the service exactly as `npm start` does (node --import tsx src/main.ts serve) on a fresh data directory with
 * the embedded PostgreSQL, calls it with a key from demo.json, stops it with SIGTERM, then kills a run
 * hard and checks that the next start recovers.
 *
 * Every call to the service has a deadline: a call that gets no answer fails the test naming its
 * step, with the service's output, instead of hanging until the test's own timeout (which left the
 * service running once in CI). A failing test kills the services it started.
 */
import { describe, expect, it, onTestFailed, onTestFinished } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freePort } from "./support/globalSetup.js"

const ROOT = path.resolve(import.meta.dirname, "..")

/** How long one request may take before the test fails: far above a loaded machine's few seconds. */
const REQUEST_TIMEOUT_MS = 30_000

/** Every service this test started, for the output on failure and the kill at the end. */
const started: Array<Started> = []

interface Started {
  readonly child: ChildProcess
  readonly output: () => string
  readonly base: string
}

const start = async (step: string, dataDir: string, port: number, pgPort: number, clusterPort: number): Promise<Started> => {
  // `npm start` runs exactly this command (package.json "start").
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start as string
  expect(script).toBe("node --import tsx src/main.ts serve")
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...withoutDatabaseUrl(),
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_PG_PORT: String(pgPort),
      CLUSTER_PORT: String(clusterPort),
      SANDBOX_PORT: "0",
      LOG_LEVEL: "info"
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c) => (out += c))
  child.stderr!.on("data", (c) => (out += c))
  const base = `http://127.0.0.1:${port}`
  started.push({ child, output: () => out, base })
  const deadline = Date.now() + 120_000
  let last = "no answer yet"
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${step}: service exited ${child.exitCode}:\n${out}`)
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) })
      if (res.status === 200) return { child, output: () => out, base }
      last = `status ${res.status}`
      await res.body?.cancel()
    } catch (e) {
      last = String(e) // not up yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  child.kill("SIGKILL")
  throw new Error(`${step}: service did not answer /healthz within 120 s (last: ${last}):\n${out}`)
}

/** The tail of a service's output, for failure messages. */
const tail = (output: () => string) => `--- service output (last 4000 characters) ---\n${output().slice(-4000)}`

/**
 * GET `pathname` from `service` (with a bearer `secret`) and read the body: fails naming `step`
 * when there is no complete answer within REQUEST_TIMEOUT_MS.
 */
const get = async (service: Started, step: string, pathname: string, secret?: string) => {
  const t0 = Date.now()
  try {
    const res = await fetch(`${service.base}${pathname}`, {
      headers: secret ? { authorization: `Bearer ${secret}` } : {},
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    const text = await res.text()
    return { status: res.status, json: () => JSON.parse(text) }
  } catch (cause) {
    const reason = cause instanceof Error && cause.name === "TimeoutError"
      ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
      : `failed after ${Date.now() - t0} ms: ${String(cause)}`
    throw new Error(`${step}: GET ${pathname} ${reason}\n${tail(service.output)}`, { cause })
  }
}

const withoutDatabaseUrl = () => {
  const env = { ...process.env }
  delete env.DATABASE_URL
  return env
}

/** The exit code; fails with the process's output when it has not exited within a minute (a hang). */
const exited = (child: ChildProcess, output?: () => string) =>
  new Promise<number | null>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the service did not exit within 60 s:\n${output ? tail(output) : ""}`))
    }, 60_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve(code)
    })
  })

const postgresRunning = (dataDir: string) => {
  const pidFile = path.join(dataDir, "pg", "postmaster.pid")
  if (!fs.existsSync(pidFile)) return false
  const pid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0])
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * After the test, failed or not: services still running get SIGTERM (they stop their PostgreSQL),
 * then SIGKILL; a PostgreSQL still left on the data directory is stopped; the directory is removed.
 */
const stopLeftovers = async (dataDir: string) => {
  for (const { child } of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    child.kill("SIGTERM")
    const gone = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
    if (!gone) child.kill("SIGKILL")
  }
  if (postgresRunning(dataDir)) {
    const pid = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
    process.kill(pid, "SIGQUIT")
  }
  fs.rmSync(dataDir, { recursive: true, force: true })
}

describe("npm start", () => {
  it("serves the demo on the embedded database, stops cleanly, and recovers after a hard kill", { timeout: 300_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "partner-start-"))
    fs.chmodSync(dataDir, 0o755)
    const [port, pgPort, clusterPort] = [await freePort(), await freePort(), await freePort()]
    onTestFailed(() => {
      for (const [i, service] of started.entries()) console.error(`service #${i + 1} (${service.base}):\n${tail(service.output)}`)
    })
    onTestFinished(() => stopLeftovers(dataDir))
    const first = await start("first start", dataDir, port, pgPort, clusterPort)
    expect(first.output()).toContain(`${first.base}/api/v1`)
    expect(first.output()).toContain("demo.json")
    expect(first.output()).toContain("curl")

    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, "demo.json"), "utf8"))
    const key = demo.keys.find((k: any) => k.state === "active" && k.scopes.includes("bookings:read"))
    const me = await get(first, "first start, the demo key", "/api/v1/me", key.secret)
    expect(me.status).toBe(200)
    expect(me.json().key.id).toBe(key.id)
    const bookings = await get(first, "first start, bookings", "/api/v1/bookings?limit=100", key.secret)
    expect(bookings.json().data.length).toBe(100)
    // The demo's booking system is mirrored at start: today's manifest is full (in the operator's zone).
    const reader = demo.keys.find((k: any) => k.state === "active" && k.scopes.includes("manifest:read"))
    const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Oslo" }).format(new Date())
    const manifest = (await get(first, "first start, manifest", `/api/v1/manifest?date=${today}`, reader.secret)).json()
    expect(manifest.totals.passengers, JSON.stringify(manifest.totals)).toBeGreaterThan(50)
    expect(manifest.synced_at).not.toBeNull()
    for (const state of ["expired", "revoked", "creator_demoted"]) {
      const k = demo.keys.find((x: any) => x.state === state)
      expect((await get(first, `first start, a ${state} key`, "/api/v1/me", k.secret)).status, state).toBe(401)
    }

    // SIGTERM: drained, database shut down, exit code 0.
    first.child.kill("SIGTERM")
    expect(await exited(first.child, first.output)).toBe(0)
    expect(postgresRunning(dataDir)).toBe(false)

    // A run killed hard leaves PostgreSQL behind; the next start stops it and carries on with the same data.
    const second = await start("second start (then killed hard)", dataDir, port, pgPort, clusterPort)
    second.child.kill("SIGKILL")
    await exited(second.child, second.output)
    expect(postgresRunning(dataDir)).toBe(true)
    const third = await start("start after a hard kill", dataDir, port, pgPort, clusterPort)
    expect(third.output()).toContain("ended abruptly")
    const again = await get(third, "start after a hard kill, the demo key", "/api/v1/me", key.secret)
    expect(again.status).toBe(200)
    third.child.kill("SIGINT")
    expect(await exited(third.child, third.output)).toBe(0)
    expect(postgresRunning(dataDir)).toBe(false)

    // A half-initialised data directory (initdb cut short) is rebuilt.
    fs.rmSync(path.join(dataDir, "pg", ".initialised"))
    fs.rmSync(path.join(dataDir, "demo.json"))
    const fourth = await start("start on a half-initialised directory", dataDir, port, pgPort, clusterPort)
    expect(fourth.output()).toContain("half-initialised")
    expect(fs.existsSync(path.join(dataDir, "demo.json"))).toBe(true)
    fourth.child.kill("SIGTERM")
    expect(await exited(fourth.child, fourth.output)).toBe(0)
  })
})
