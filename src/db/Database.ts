/**
 * The SqlClient layer: a PostgreSQL server from DATABASE_URL, or the embedded one under DATA_DIR.
 * Migrations run once the client is up, so every consumer of this layer sees the current schema.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { migrations } from "../../migrations/index.js"
import { AppConfig } from "../config.js"
import { redactText } from "../observability/redact.js"
import { startEmbeddedPostgres } from "./embedded.js"
import { pgTypes } from "./pgTypes.js"
import { pgClientOnPool } from "./pools.js"

const retryConnect = Layer.retry(Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(8))))

/**
 * How long a query may wait for a connection (a free one from the pool, or a new one): past it the
 * query fails instead of waiting forever, so a starved or unreachable database turns into errors a
 * client sees, never into requests that hang.
 */
const ACQUIRE_TIMEOUT = Duration.seconds(15)

export const pgClientLayer = (url: string, maxConnections = 10) =>
  pgClientOnPool({
    url,
    maxConnections,
    connectTimeout: ACQUIRE_TIMEOUT,
    types: pgTypes,
    applicationName: "tour-partner-service"
  }).pipe(retryConnect)

/**
 * A second, small pool on the same database as the service's PgClient, for @effect/cluster's runner
 * and message storage only: its shard-lock connection (held for the runner's life) and pollers then
 * wait for their own connections and never for a request's. Named in pg_stat_activity; closed with
 * its scope. int8 comes back as text here (node-postgres's default), as @effect/cluster expects.
 */
export const clusterPgClientLayer = (maxConnections: number) =>
  Layer.unwrapEffect(Effect.map(PgClient.PgClient, (main) =>
    pgClientOnPool({
      // Not the service's type parsers (no `types`): the cluster's message and reply ids are int8
      // snowflakes past 2^53 that it reads as strings; as numbers they were rounded, replies were saved
      // under ids of no message, and runs were repeated after a restart (issue 17 defect 8,
      // docs/decisions.md).
      url: main.config.url ? Redacted.value(main.config.url) : "",
      maxConnections,
      connectTimeout: ACQUIRE_TIMEOUT,
      applicationName: "tour-partner-service/cluster"
    }).pipe(retryConnect)))

export const MigratorLive = PgMigrator.layer({ loader: PgMigrator.fromRecord(migrations) }).pipe(
  Layer.provide(NodeContext.layer)
)

/**
 * The migrators look for their own tables before creating them (expected on a new database), and
 * our readiness probe knocks while the server is starting up: neither is worth a line.
 */
const FIRST_START_PROBE =
  /relation "(effect_sql_migrations|cluster_[a-z_]+)" does not exist|the database system is starting up/

/** Resolves where the database is: DATABASE_URL, or the embedded cluster (started for the scope). */
export const DatabaseUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) return Redacted.value(config.databaseUrl.value)
  const server = yield* startEmbeddedPostgres({
    dataDir: config.dataDir,
    port: config.embeddedPgPort,
    onLog: (line) => {
      if (/FATAL|PANIC|ERROR/.test(line) && !FIRST_START_PROBE.test(line)) {
        console.error(`[postgres] ${redactText(line)}`)
      }
    }
  })
  yield* Effect.logInfo(`embedded PostgreSQL ready on 127.0.0.1:${server.port} (data in ${config.dataDir}/pg)`)
  return server.url
})

/** SqlClient + PgClient with migrations applied. */
export const layerFromUrl = (url: string, maxConnections?: number) =>
  MigratorLive.pipe(Layer.provideMerge(pgClientLayer(url, maxConnections)))

export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const url = yield* DatabaseUrl
    const config = yield* AppConfig
    return layerFromUrl(url, config.dbPoolSize)
  })
)
