/**
 * `npm start` (src/main.ts serve) with a port setting that names a port in use, as when a second
 * instance runs on one machine: the start stops with an error naming the setting (PORT,
 * SANDBOX_PORT, EMBEDDED_PG_PORT, CLUSTER_PORT), exit code 1, and no bare crash. Before, PORT failed
 * late with an unhandled EADDRINUSE, and a port held by something that is not PostgreSQL hung the
 * embedded database's readiness probe.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freeFixedPort } from "./support/globalSetup.js"
import { freshDatabase } from "./support/server.js"

const ROOT = path.resolve(import.meta.dirname, "..")

/** A port held on 127.0.0.1 by another process's socket, for the test. */
const held = () =>
  new Promise<{ port: number; close: () => Promise<void> }>((resolve) => {
    // It takes connections and never answers, as a program that is not PostgreSQL would.
    const sockets = new Set<net.Socket>()
    const server = net.createServer((socket) => {
      sockets.add(socket)
      socket.on("error", () => {})
      socket.on("close", () => sockets.delete(socket))
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      }))
  })

/** Runs `serve` with `env` until it exits (killed after 90 s: a hang); its exit code and output. */
const serve = (env: Record<string, string | undefined>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "info" }
    delete base.DATABASE_URL
    delete base.CLUSTER_PORT
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve"], {
      cwd: ROOT,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (c) => (output += c))
    child.stderr!.on("data", (c) => (output += c))
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

const expectNamed = (run: { code: number | null; output: string }, setting: string, port: number) => {
  expect(run.code, run.output).toBe(1)
  expect(run.output).toContain(`${setting} ${port} on 127.0.0.1 is in use`)
  expect(run.output).not.toContain("Unhandled 'error' event")
}

describe("npm start with a port in use", () => {
  it("names PORT, SANDBOX_PORT and CLUSTER_PORT", { timeout: 300_000 }, async () => {
    const databaseUrl = await Effect.runPromise(freshDatabase)
    const common = { DATABASE_URL: databaseUrl, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "partner-ports-")) }
    const taken = await held()
    try {
      const [port, sandboxPort] = [await freeFixedPort(), await freeFixedPort()]
      expectNamed(await serve({ ...common, PORT: String(taken.port), DEMO_DATA: "false" }), "PORT", taken.port)
      expectNamed(
        await serve({ ...common, PORT: String(port), SANDBOX_PORT: String(taken.port), DEMO_DATA: "true" }),
        "SANDBOX_PORT",
        taken.port
      )
      expectNamed(
        await serve({
          ...common,
          PORT: String(port),
          SANDBOX_PORT: String(sandboxPort),
          CLUSTER_PORT: String(taken.port),
          DEMO_DATA: "false"
        }),
        "CLUSTER_PORT",
        taken.port
      )
    } finally {
      await taken.close()
      fs.rmSync(common.DATA_DIR, { recursive: true, force: true })
    }
  })

  it(
    "names EMBEDDED_PG_PORT, and does not hang when the port's holder never answers",
    { timeout: 180_000 },
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "partner-ports-pg-"))
      fs.chmodSync(dataDir, 0o755)
      const taken = await held()
      try {
        const started = Date.now()
        const run = await serve({
          DATA_DIR: dataDir,
          EMBEDDED_PG_PORT: String(taken.port),
          PORT: String(await freeFixedPort())
        })
        expectNamed(run, "EMBEDDED_PG_PORT", taken.port)
        // Stopped within seconds: not by the 90 s kill.
        expect(Date.now() - started, run.output).toBeLessThan(80_000)
      } finally {
        await taken.close()
        fs.rmSync(dataDir, { recursive: true, force: true })
      }
    }
  )
})
