/**
 * The SQL of request counting (RateLimiter; `rate_limit_counters`): one atomic upsert that both
 * counts the request in its fixed window (on the database clock) and reads the window. A database
 * error or a row that does not decode is a defect here, once.
 *
 * It runs on every request of both APIs (`npm run bench`, bench/README.md "Issue 2"): decoded (one
 * small row) but without a span of its own (`repoEdge.untraced`: RateLimiter.hit's and the driver's
 * cover it).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

const Hit = Schema.Struct({ bucket: Schema.String, windowSeconds: Schema.Number })

export class RateLimiterRepo extends Effect.Service<RateLimiterRepo>()("Http/RateLimiterRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = SqlSchema.single({
      Request: Hit,
      Result: Schema.Struct({ count: Schema.Number, reset_seconds: Schema.Number }),
      execute: ({ bucket, windowSeconds }) =>
        sql`
          INSERT INTO rate_limit_counters AS c (bucket, window_start, count)
          VALUES (${bucket}, to_timestamp(floor(extract(epoch FROM now()) / ${windowSeconds}) * ${windowSeconds}), 1)
          ON CONFLICT (bucket) DO UPDATE SET
            count = CASE WHEN c.window_start = excluded.window_start THEN c.count + 1 ELSE 1 END,
            window_start = excluded.window_start
          RETURNING count,
            ceil(extract(epoch FROM (window_start + make_interval(secs => ${windowSeconds}) - now())))::int AS reset_seconds`
    })

    return repoEdge.untraced({
      /** Counts one request of the bucket: the count in the current window and seconds until it resets. */
      count: (hit: typeof Hit.Type) => upsert(hit)
    })
  })
}) {}
