/**
 * The SQL of the desk's seat holds (QuickbookHolds): a terminal's sale read (locked for the hold's
 * transaction) and its hold recorded or released on the row of `quickbook_sales`. Typed with
 * SqlSchema and the row schema below; a database error or a row that does not decode is a defect
 * at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { CartLine } from "./Api.js"

export const HeldSale = Schema.Struct({
  reference: Schema.String,
  tour_id: Schema.String,
  product_id: Schema.String,
  rate_id: Schema.NullOr(Schema.String),
  start_date: Schema.String,
  start_time: Schema.String,
  start_time_id: Schema.String,
  guests: Schema.Array(Schema.Struct({
    type: Schema.String,
    count: Schema.Number,
    unitMinor: Schema.Number,
    categoryId: Schema.String
  })),
  cart_line: CartLine,
  status: Schema.String,
  valid_until: Schema.DateFromSelf,
  hold_id: Schema.NullOr(Schema.String),
  hold_expires_at: Schema.NullOr(Schema.DateFromSelf),
  hold_idempotency_key: Schema.NullOr(Schema.String),
  /** The mode of the key the sale was quoted with. */
  key_mode: Schema.Literal("live", "test")
})
export type HeldSale = typeof HeldSale.Type

export class QuickbookHoldsRepo extends Effect.Service<QuickbookHoldsRepo>()("Quickbook/HoldsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The terminal's sale, locked until the transaction ends; None when it has no such sale. */
    const lockSale = SqlSchema.findOne({
      Request: Schema.Struct({ reference: Schema.String, terminalId: Schema.String }),
      Result: HeldSale,
      execute: ({ reference, terminalId }) =>
        sql`
          SELECT reference, tour_id, product_id, rate_id, to_char(start_date, 'YYYY-MM-DD') AS start_date, start_time,
            start_time_id, guests, cart_line, status, valid_until, hold_id, hold_expires_at, hold_idempotency_key,
            (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode
          FROM quickbook_sales s WHERE reference = ${reference} AND terminal_id = ${terminalId}
          FOR UPDATE OF s`
    })

    /** The sale is held: its hold, until when, under which idempotency key; the quote stands as long. */
    const markHeld = SqlSchema.void({
      Request: Schema.Struct({
        reference: Schema.String,
        holdId: Schema.String,
        expiresAt: Schema.DateFromSelf,
        idempotencyKey: Schema.String
      }),
      execute: (h) =>
        sql`
          UPDATE quickbook_sales SET status = 'held', hold_id = ${h.holdId}, hold_expires_at = ${h.expiresAt},
            hold_idempotency_key = ${h.idempotencyKey}, hold_released_at = NULL,
            valid_until = GREATEST(valid_until, ${h.expiresAt}), updated_at = now()
          WHERE reference = ${h.reference}`
    })

    /** The hold is released: `quoted` again while the quote stands, else `expired`. */
    const markReleased = SqlSchema.void({
      Request: Schema.String,
      execute: (reference) =>
        sql`
          UPDATE quickbook_sales SET status = CASE WHEN valid_until > now() THEN 'quoted' ELSE 'expired' END,
            hold_id = NULL, hold_expires_at = NULL, hold_idempotency_key = NULL, hold_released_at = now(), updated_at = now()
          WHERE reference = ${reference}`
    })

    return repoEdge("QuickbookHoldsRepo", { lockSale, markHeld, markReleased })
  })
}) {}
