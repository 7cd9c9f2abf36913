/**
 * The service's connection pools (node-postgres), opened here rather than inside @effect/sql-pg so
 * that their use can be read: `poolStats()` gives each open pool's connections (total, idle), the
 * queries waiting for one, and its size, for the metrics (src/observability/gauges.ts).
 */
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect } from "effect"
import pg from "pg"

export interface PoolStats {
  readonly name: string
  readonly total: number
  readonly idle: number
  readonly waiting: number
  readonly max: number
}

const open = new Map<pg.Pool, string>()

export const poolStats = (): Array<PoolStats> =>
  [...open].map(([pool, name]) => ({
    name,
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
    max: pool.options.max ?? 10
  }))

export interface PoolOptions {
  readonly url: string
  readonly maxConnections: number
  /** How long a query may wait for a connection, and the first connection may take. */
  readonly connectTimeout: Duration.Duration
  /** In pg_stat_activity, and the pool's label in the metrics (after the last `/`, or `main`). */
  readonly applicationName: string
  readonly types?: pg.CustomTypesConfig
}

/**
 * A PgClient (and SqlClient) layer over a pool opened here: checked with `SELECT 1` within
 * `connectTimeout`, closed (at most a second's wait) with its scope.
 */
export const pgClientOnPool = (options: PoolOptions) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.gen(function*() {
        const pool = new pg.Pool({
          connectionString: options.url,
          max: options.maxConnections,
          connectionTimeoutMillis: Duration.toMillis(options.connectTimeout),
          application_name: options.applicationName,
          ...(options.types ? { types: options.types } : {})
        })
        // An idle connection's error (the server restarted) is the pool's to handle, not a crash.
        pool.on("error", () => {})
        yield* Effect.tryPromise({
          try: () => pool.query("SELECT 1"),
          catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
        }).pipe(
          Effect.timeoutFail({
            duration: options.connectTimeout,
            onTimeout: () =>
              new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
          }),
          Effect.tapError(() => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(1000)))
        )
        const slash = options.applicationName.lastIndexOf("/")
        open.set(pool, slash < 0 ? "main" : options.applicationName.slice(slash + 1))
        return pool
      }),
      (pool) =>
        Effect.sync(() => open.delete(pool)).pipe(
          Effect.zipRight(Effect.promise(() => pool.end())),
          Effect.interruptible,
          Effect.timeoutOption(1000)
        )
    ),
    applicationName: options.applicationName,
    ...(options.types ? { types: options.types } : {})
  })
