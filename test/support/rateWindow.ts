/**
 * Rate limits count in fixed one-minute windows on the database clock. A test that spends a
 * budget calls this first so the minute cannot turn over mid-test and restart the count.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const withRoomInWindow = (seconds: number, windowSeconds = 60) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ left: number }>`
      SELECT ${windowSeconds} - mod(extract(epoch FROM clock_timestamp())::numeric, ${windowSeconds})::float8 AS left`
      .pipe(Effect.orDie)
    if (row!.left < seconds) yield* Effect.sleep(`${Math.ceil(row!.left * 1000) + 50} millis`)
  })
