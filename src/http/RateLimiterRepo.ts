/**
 * The SQL of request counting (RateLimiter; `rate_limit_counters`): one atomic upsert that both
 * counts the request in its fixed window (on the database clock) and reads the window. A database
 * error or a row that does not decode is a defect here, once.
 *
 * It runs on every request of both APIs (`npm run bench`, bench/README.md "Issue 2" and "Issue 18"):
 * a plain `sql<Row>` typed row (both columns are integers, which the driver gives as numbers), not
 * decoded by a Schema, and without a span of its own (`repoEdge.untraced`: RateLimiter.hit's and the
 * driver's cover it).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge, theRow } from "../db/repoEdge.js"

interface Hit {
  readonly bucket: string
  readonly windowSeconds: number
}

interface WindowRow {
  readonly count: number
  readonly reset_seconds: number
}

export class RateLimiterRepo extends Effect.Service<RateLimiterRepo>()("Http/RateLimiterRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsert = ({ bucket, windowSeconds }: Hit) =>
      Effect.flatMap(
        sql<WindowRow>`
          INSERT INTO rate_limit_counters AS c (bucket, window_start, count)
          VALUES (${bucket}, to_timestamp(floor(extract(epoch FROM now()) / ${windowSeconds}) * ${windowSeconds}), 1)
          ON CONFLICT (bucket) DO UPDATE SET
            count = CASE WHEN c.window_start = excluded.window_start THEN c.count + 1 ELSE 1 END,
            window_start = excluded.window_start
          RETURNING count,
            ceil(extract(epoch FROM (window_start + make_interval(secs => ${windowSeconds}) - now())))::int AS reset_seconds`,
        // An upsert with RETURNING always gives its row.
        theRow
      )

    return repoEdge.untraced({
      /** Counts one request of the bucket: the count in the current window and seconds until it resets. */
      count: (hit: Hit) => upsert(hit)
    })
  })
}) {}
