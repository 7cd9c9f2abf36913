/**
 * The SQL behind the gauges of ./gauges.ts: one statement, read on the metric export interval
 * (never per request), each part on a partial index (email_outbox_due/leases, booking_refunds_due,
 * payment_link_refunds_due, quickbook_payments_open, pay_later_charges' due index).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

/** count(*) is a bigint, read as a number (src/db/pgTypes.ts). */
const Count = Schema.Number

export const GaugeRow = Schema.Struct({
  outbox_backlog: Count,
  outbox_oldest_age: Schema.NullOr(Schema.Number),
  booking_refunds: Count,
  payment_link_refunds: Count,
  quickbook_refunds: Count,
  charges_upcoming: Count,
  charges_upcoming_due: Count,
  charges_retrying: Count,
  charges_retrying_due: Count
})
export type GaugeRow = typeof GaugeRow.Type

export class GaugesRepo extends Effect.Service<GaugesRepo>()("Observability/GaugesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const read = SqlSchema.single({
      Request: Schema.Void,
      Result: GaugeRow,
      execute: () =>
        sql`
          SELECT
            (SELECT count(*) FROM email_outbox WHERE status IN ('pending', 'sending')) AS outbox_backlog,
            (SELECT extract(epoch FROM now() - min(created_at))::float8 FROM email_outbox
              WHERE status IN ('pending', 'sending')) AS outbox_oldest_age,
            (SELECT count(*) FROM booking_refunds WHERE state IN ('requested', 'settling', 'partial')) AS booking_refunds,
            (SELECT count(*) FROM payment_link_refunds WHERE state IN ('requested', 'settling')) AS payment_link_refunds,
            (SELECT count(*) FROM quickbook_payments WHERE state = 'refunding') AS quickbook_refunds,
            (SELECT count(*) FROM pay_later_charges WHERE state = 'upcoming') AS charges_upcoming,
            (SELECT count(*) FROM pay_later_charges WHERE state = 'upcoming' AND charge_at <= now()) AS charges_upcoming_due,
            (SELECT count(*) FROM pay_later_charges WHERE state = 'failed' AND retrying) AS charges_retrying,
            (SELECT count(*) FROM pay_later_charges WHERE state = 'failed' AND retrying AND next_attempt_at <= now())
              AS charges_retrying_due`
    })
    return repoEdge.untraced({ read })
  })
}) {}
