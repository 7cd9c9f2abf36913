/**
 * The SQL of the Quickbook expiry sweep (QuickbookExpiry): sales whose hold lapsed, each locked and
 * settled on its own, and quotes past their validity expired. Typed with SqlSchema and the row
 * schema below; a database error or a row that does not decode is a defect at its edge (repoEdge: a
 * span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"

/** A held sale whose hold lapsed, with what releasing it needs: the key's mode and the tour's account. */
export const LapsedSale = Schema.Struct({
  reference: Schema.String,
  hold_id: Schema.String,
  mode: Schema.Literal("live", "test"),
  account_id: Schema.NullOr(Schema.String),
  account_sandbox: Schema.NullOr(Schema.Boolean)
})
export type LapsedSale = typeof LapsedSale.Type

const Reference = Schema.Struct({ reference: Schema.String })

export class QuickbookExpiryRepo extends Effect.Service<QuickbookExpiryRepo>()("Quickbook/ExpiryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Up to `limit` sales whose hold lapsed by `now`, the oldest lapse first. */
    const lapsedHolds = SqlSchema.findAll({
      Request: Schema.Struct({ now: Schema.DateFromSelf, limit: Schema.Number }),
      Result: Reference,
      execute: ({ limit, now }) =>
        sql`
          SELECT reference FROM quickbook_sales WHERE status = 'held' AND hold_expires_at <= ${now}
          ORDER BY hold_expires_at LIMIT ${limit}`
    })

    /** The sale, locked, if its hold still lapsed by `now` and no one else holds its row (SKIP LOCKED). */
    const lockLapsed = SqlSchema.findOne({
      Request: Schema.Struct({ reference: Schema.String, now: Schema.DateFromSelf }),
      Result: LapsedSale,
      execute: ({ now, reference }) =>
        sql`
          SELECT s.reference, s.hold_id, k.mode, a.id AS account_id, a.sandbox AS account_sandbox
          FROM quickbook_sales s
            JOIN quickbook_keys k ON k.id = s.key_id
            JOIN tours t ON t.id = s.tour_id JOIN operators o ON o.id = t.operator_id
            LEFT JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
          WHERE s.reference = ${reference} AND s.status = 'held' AND s.hold_expires_at <= ${now}
          FOR UPDATE OF s SKIP LOCKED`
    })

    /** The lapsed hold settled as a release settles it: `quoted` while the quote stands, else `expired`. */
    const settleLapsed = SqlSchema.void({
      Request: Schema.Struct({
        reference: Schema.String,
        now: Schema.DateFromSelf,
        releasedAt: Schema.NullOr(Schema.DateFromSelf)
      }),
      execute: ({ now, reference, releasedAt }) =>
        sql`
          UPDATE quickbook_sales SET status = CASE WHEN valid_until > ${now} THEN 'quoted' ELSE 'expired' END,
            hold_id = NULL, hold_expires_at = NULL, hold_idempotency_key = NULL,
            hold_released_at = ${releasedAt}, updated_at = now()
          WHERE reference = ${reference}`
    })

    /** Quotes past their validity by `now` become `expired`; answers them. */
    const expireQuotes = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: Reference,
      execute: (now) =>
        sql`
          UPDATE quickbook_sales SET status = 'expired', updated_at = now()
          WHERE status = 'quoted' AND valid_until <= ${now} RETURNING reference`
    })

    return repoEdge("QuickbookExpiryRepo", { lapsedHolds, lockLapsed, settleLapsed, expireQuotes })
  })
}) {}
