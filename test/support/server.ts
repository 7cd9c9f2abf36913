/**
 * The real HTTP server on a real PostgreSQL for tests: a fresh database per test file (or a shared
 * one for multi-instance tests), migrations applied, listening on an ephemeral loopback port.
 */
import { HttpServer } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { inject } from "vitest"
import { ExternalSystemsLive, OutboxLive } from "../../src/adapters/live.js"
import { RatesLive } from "../../src/app.js"
import { layerFromUrl } from "../../src/db/Database.js"
import { createDatabase } from "../../src/db/embedded.js"
import { HttpLive, nodeServer } from "../../src/Http.js"
import { ObservabilityLive } from "../../src/observability.js"
import { GaugesLive } from "../../src/observability/gauges.js"
import { Operators } from "../../src/operators/Operators.js"

export interface ServerOptions {
  /** Reuse this database instead of creating one (several instances on one database). */
  readonly databaseUrl?: string
  readonly env?: Record<string, string>
}

/**
 * Where the exchange-rate sources are unless a test says (EXCHANGE_RATES_NORGES_BANK_URL,
 * EXCHANGE_RATES_ECB_URL; a rates sandbox's baseUrl for both): port 9 refuses every connection.
 */
export const NO_RATE_SOURCES = {
  EXCHANGE_RATES_NORGES_BANK_URL: "http://127.0.0.1:9",
  EXCHANGE_RATES_ECB_URL: "http://127.0.0.1:9"
}

export class TestServer extends Context.Tag("TestServer")<TestServer, {
  readonly baseUrl: string
  readonly databaseUrl: string
}>() {}

export const freshDatabase = Effect.suspend(() =>
  createDatabase(inject("adminDatabaseUrl"), `t_${randomUUID().replaceAll("-", "").slice(0, 16)}`)
)

/** One server instance (its own pool) on `databaseUrl`. */
export const serverOn = (databaseUrl: string, env: Record<string, string> = {}) =>
  Layer.scoped(
    TestServer,
    Effect.map(HttpServer.HttpServer, (server) => {
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      return { baseUrl: `http://127.0.0.1:${port}`, databaseUrl }
    })
  ).pipe(
    Layer.provideMerge(HttpLive),
    Layer.provide(nodeServer("127.0.0.1", 0)),
    Layer.provideMerge(GaugesLive),
    // What the write handlers call: the booking system and payment provider (real adapters, settings
    // from env) and the outbox.
    Layer.provideMerge(OutboxLive),
    Layer.provideMerge(ExternalSystemsLive),
    // The daily exchange rates; their sources are the test's (env), else a closed port (never the internet).
    Layer.provideMerge(RatesLive),
    Layer.provideMerge(Operators.Default),
    Layer.provideMerge(layerFromUrl(databaseUrl, 4)),
    Layer.provide(ObservabilityLive),
    Layer.provide(
      Layer.setConfigProvider(
        ConfigProvider.fromMap(new Map(Object.entries({ LOG_LEVEL: "Warning", ...NO_RATE_SOURCES, ...env })))
      )
    )
  )

/** A server on a fresh database, with the SqlClient and Operators service for fixtures. */
export const testServer = (options: ServerOptions = {}) =>
  Layer.unwrapEffect(
    Effect.map(
      options.databaseUrl ? Effect.succeed(options.databaseUrl) : freshDatabase,
      (url) => serverOn(url, options.env)
    )
  )

export type TestEnv = TestServer | SqlClient.SqlClient | Operators
