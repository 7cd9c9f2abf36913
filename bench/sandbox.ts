/**
 * A sandbox (src/sandbox) as a process of its own, for bench/mirror.ts and bench/changes.ts: the
 * system we do not own answers from its own event loop, as a remote one would, and its CPU is
 * measured apart from the service's.
 *
 * `bench/sandbox.ts [bokun|surfboard]` (default bokun): the Bókun sandbox (tables in schema
 * bokun_sandbox) or the Surfboard sandbox (schema surfboard_sandbox).
 *
 * Env: DATABASE_URL, PORT, HOST (default 127.0.0.1), BENCH_SANDBOX_APPLICATION_NAME (the
 * application_name of its PostgreSQL connections; default SANDBOX_APPLICATION_NAME, `bench-sandbox`).
 * Exits when its stdin closes (the runner holds the other end), so it never outlives the runner.
 */
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { pgTypes } from "../src/db/pgTypes.js"
import * as Bokun from "../src/sandbox/bokun/index.js"
import * as Surfboard from "../src/sandbox/surfboard/index.js"
import { SANDBOX_APPLICATION_NAME } from "./settings.js"

const kind = process.argv[2] ?? "bokun"
if (kind !== "bokun" && kind !== "surfboard") throw new Error(`unknown sandbox ${kind} (bokun or surfboard)`)

const database = PgClient.layer({
  url: Redacted.make(process.env.DATABASE_URL ?? ""),
  maxConnections: 4,
  types: pgTypes,
  applicationName: process.env.BENCH_SANDBOX_APPLICATION_NAME || SANDBOX_APPLICATION_NAME
})

const main = Effect.gen(function*() {
  const options = { port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" }
  const sandbox = kind === "bokun" ? yield* Bokun.startSandbox(options) : yield* Surfboard.startSandbox(options)
  yield* Effect.sync(() =>
    console.log(`${kind === "bokun" ? "Bókun" : "Surfboard"} sandbox listening on ${sandbox.baseUrl}`)
  )
  yield* Effect.async<void>((resume) => {
    process.stdin.on("end", () => resume(Effect.void))
    process.stdin.on("error", () => resume(Effect.void))
    process.stdin.resume()
  })
})

NodeRuntime.runMain(
  Effect.scoped(main).pipe(
    Effect.provide(Layer.merge(database, Logger.minimumLogLevel(LogLevel.Warning))),
    Effect.orDie
  )
)
