/**
 * The Bókun sandbox (src/sandbox/bokun) as a process of its own, for bench/mirror.ts: the booking
 * system answers from its own event loop, as a remote one would, and its CPU is measured apart
 * from the mirror's. Its PostgreSQL connections are named SANDBOX_APPLICATION_NAME (`bench-sandbox`).
 *
 * Env: DATABASE_URL (its tables go to schema bokun_sandbox there), PORT, HOST (default 127.0.0.1).
 * Exits when its stdin closes (the runner holds the other end), so it never outlives the runner.
 */
import { NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Logger, LogLevel, Redacted } from "effect"
import { pgTypes } from "../src/db/pgTypes.js"
import { startSandbox } from "../src/sandbox/bokun/index.js"
import { SANDBOX_APPLICATION_NAME } from "./settings.js"

const database = PgClient.layer({
  url: Redacted.make(process.env.DATABASE_URL ?? ""),
  maxConnections: 4,
  types: pgTypes,
  applicationName: SANDBOX_APPLICATION_NAME
})

const main = Effect.gen(function*() {
  const sandbox = yield* startSandbox({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" })
  yield* Effect.sync(() => console.log(`Bókun sandbox listening on ${sandbox.baseUrl}`))
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
