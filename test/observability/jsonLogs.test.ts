/**
 * LOG_FORMAT=json as a log collector reads it: the real service process (`src/main.ts serve`, as
 * `npm start` runs it) on a fresh database, tracing on (an OTLP receiver of this test), a few
 * requests, then SIGTERM. Every stdout line must parse as one JSON event (no pretty block, no
 * banner), request events carry `request_id`, `trace_id` and `span_id`, and the secret key sent in
 * a query string appears nowhere in stdout or stderr.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { freeFixedPort } from "../support/globalSetup.js"
import { startOtlpReceiver } from "../support/otlpReceiver.js"
import { freshDatabase } from "../support/server.js"

const ROOT = path.resolve(import.meta.dirname, "../..")

/** Shaped like a secret key; no key of the database, so it is refused, and must not be logged. */
const SECRET = "svc_live_AbCdEfGhIjKlMnOpQrSt_0123456789abcdefghijABCDEFGHIJkl"

describe("LOG_FORMAT=json", () => {
  it.live(
    "stdout is newline-delimited JSON, one event per line, with request, trace and span ids",
    () =>
      Effect.gen(function*() {
        const databaseUrl = yield* freshDatabase
        const receiver = yield* Effect.promise(() => startOtlpReceiver())
        const port = yield* Effect.promise(() => freeFixedPort())
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "json-logs-"))
        const output = yield* Effect.promise(async () => {
          const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve"], {
            cwd: ROOT,
            env: {
              ...process.env,
              DATABASE_URL: databaseUrl,
              DATA_DIR: dataDir,
              PORT: String(port),
              SANDBOX_PORT: "0",
              LOG_FORMAT: "json",
              LOG_LEVEL: "info",
              OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url
            },
            stdio: ["ignore", "pipe", "pipe"]
          })
          let stdout = ""
          let stderr = ""
          child.stdout.on("data", (c) => (stdout += c))
          child.stderr.on("data", (c) => (stderr += c))
          const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
          try {
            const base = `http://127.0.0.1:${port}`
            const deadline = Date.now() + 120_000
            for (;;) {
              if (child.exitCode !== null) throw new Error(`service exited ${child.exitCode}:\n${stdout}\n${stderr}`)
              const up = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
                (r) => r.status === 200,
                () => false
              )
              if (up) break
              if (Date.now() > deadline) throw new Error(`no /healthz within 120 s:\n${stdout}\n${stderr}`)
              await new Promise((r) => setTimeout(r, 250))
            }
            const statuses = [
              (await fetch(`${base}/api/v1/bookings?limit=1&key=${SECRET}`)).status,
              (await fetch(`${base}/api/v1/bookings`, { headers: { authorization: `Bearer ${SECRET}` } })).status,
              (await fetch(`${base}/api/quickbook/v1/sales`)).status,
              (await fetch(`${base}/mcp`, { method: "POST" })).status
            ]
            expect(statuses.every((s) => s >= 400 && s < 500), String(statuses)).toBe(true)
            // The access log line is written after the answer: wait for the last one.
            while (!stdout.includes("\"url\":\"/mcp\"") && Date.now() < deadline) {
              await new Promise((r) => setTimeout(r, 100))
            }
          } finally {
            child.kill("SIGTERM")
            await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))])
            if (child.exitCode === null) child.kill("SIGKILL")
            await receiver.close()
            fs.rmSync(dataDir, { recursive: true, force: true })
          }
          return { stdout, stderr }
        })

        const lines = output.stdout.split("\n").filter((l) => l !== "")
        const events = lines.map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>
          } catch {
            throw new Error(`a stdout line that is not JSON: ${line}`)
          }
        })
        for (const event of events) {
          expect(typeof event.timestamp).toBe("string")
          expect(typeof event.level).toBe("string")
          expect(typeof event.message).toBe("string")
        }
        expect(events.some((e) => e.message === "listening" && typeof e.partner_api === "string")).toBe(true)
        const requests = events.filter((e) => e.message === "request")
        expect(requests.map((e) => e.url)).toEqual(expect.arrayContaining(["/api/v1/bookings", "/mcp"]))
        expect(requests.length).toBeGreaterThanOrEqual(4)
        for (const event of requests) {
          expect(event.request_id).toMatch(/^[0-9a-f-]{36}$/)
          expect(event.trace_id).toMatch(/^[0-9a-f]{32}$/)
          expect(event.span_id).toMatch(/^[0-9a-f]{16}$/)
        }
        expect(output.stdout + output.stderr).not.toContain(SECRET)
        expect(output.stdout + output.stderr).not.toContain(SECRET.slice(-32))
      }),
    180_000
  )
})
