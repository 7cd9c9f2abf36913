/**
 * The SQL of what a balance payment link is for: the service booking or manifest row a request
 * names, the money this service already took for it, and whether it still owes what a link asks.
 * Used by the write (PaymentLinks.ts) and the payment-link watch (LinkStatusChecks.ts).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { LinkRow } from "./PaymentLinksRepo.js"

/** A service booking a request may name (listed statuses only), with what the link and its email need. */
export const BookingTargetRow = Schema.Struct({
  id: Schema.String,
  operator_id: Schema.String,
  operator_name: Schema.String,
  /** CANCELLED too once a cancel of it has begun. */
  status: Schema.String,
  payment_strategy: Schema.Literal("pay_now", "pay_later"),
  pay_later_status: Schema.NullOr(Schema.String),
  pay_later_amount_minor: Schema.NullOr(Schema.Number),
  pay_later_currency: Schema.NullOr(Schema.String),
  pay_later_charge_at: Schema.NullOr(Schema.DateFromSelf),
  currency: Schema.String,
  provider_reference: Schema.NullOr(Schema.String),
  account_id: Schema.NullOr(Schema.String),
  confirmation_code: Schema.String,
  tour_name: Schema.NullOr(Schema.String),
  experience_date: Schema.NullOr(Schema.String),
  start_time: Schema.NullOr(Schema.String),
  timezone: Schema.String,
  guest_name: Schema.NullOr(Schema.String),
  guest_email: Schema.NullOr(Schema.String)
})
export type BookingTargetRow = typeof BookingTargetRow.Type

/** A manifest row (a line of a booking in the booking system) a request may name. */
export const RowTargetRow = Schema.Struct({
  id: Schema.String,
  operator_id: Schema.String,
  operator_name: Schema.String,
  status: Schema.String,
  service_booking_id: Schema.NullOr(Schema.String),
  account_id: Schema.String,
  reference: Schema.NullOr(Schema.String),
  booking_id: Schema.String,
  product_title: Schema.NullOr(Schema.String),
  departure_date: Schema.String,
  start_time: Schema.NullOr(Schema.String),
  rate_title: Schema.NullOr(Schema.String),
  timezone: Schema.String,
  guest_name: Schema.NullOr(Schema.String),
  guest_email: Schema.NullOr(Schema.String)
})
export type RowTargetRow = typeof RowTargetRow.Type

const LISTED = "('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')"

/**
 * A cancel of booking `b` has begun (its seats are being released, or it is done with its refund
 * still being finished while the booking reads CONFIRMED): the booking owes nothing any more.
 */
const CANCELLING = `EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id AND c.kind = 'cancel'
  AND c.state IN ('releasing', 'released', 'done'))`

const Named = Schema.Struct({ id: Schema.String, operatorIds: Schema.Array(Schema.String) })
const Collected = Schema.Struct({ currency: Schema.String, amount_minor: Schema.Number })

export class LinkTargetsRepo extends Effect.Service<LinkTargetsRepo>()("Partner/LinkTargetsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const bookingTarget = SqlSchema.findOne({
      Request: Named,
      Result: BookingTargetRow,
      execute: ({ id, operatorIds }) =>
        sql`
          SELECT b.id, b.operator_id, o.name AS operator_name,
            CASE WHEN ${
          sql.literal(CANCELLING)
        } THEN 'CANCELLED' ELSE b.status END AS status, b.payment_strategy, b.pay_later_status,
            b.pay_later_amount_minor, b.pay_later_currency, b.pay_later_charge_at, b.currency, b.provider_reference,
            o.booking_system_account_id AS account_id, b.confirmation_code, b.tour_name, b.experience_date,
            b.start_time, b.timezone, b.guest_name, b.guest_email
          FROM bookings b JOIN operators o ON o.id = b.operator_id
          WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
            AND ${sql.literal(`b.status IN ${LISTED}`)}`
    })

    const rowTarget = SqlSchema.findOne({
      Request: Named,
      Result: RowTargetRow,
      execute: ({ id, operatorIds }) =>
        sql`
          SELECT r.id, r.operator_id, o.name AS operator_name, r.status, r.service_booking_id, r.account_id,
            r.reference, r.booking_id, r.product_title, r.departure_date, r.start_time, r.rate_title, r.timezone,
            r.guest_name, r.guest_email
          FROM manifest_rows r JOIN operators o ON o.id = r.operator_id
          WHERE r.id = ${id}::uuid AND r.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`
    })

    const firstRowOf = SqlSchema.findOne({
      Request: Schema.Struct({ accountId: Schema.String, bookingId: Schema.String }),
      Result: IdRow,
      execute: ({ accountId, bookingId }) =>
        sql`
          SELECT id FROM manifest_rows WHERE account_id = ${accountId} AND booking_id = ${bookingId}
          ORDER BY first_seen_at, id LIMIT 1`
    })

    const collectedForBooking = SqlSchema.findAll({
      Request: Schema.String,
      Result: Collected,
      execute: (bookingId) =>
        sql`
          SELECT currency, sum(amount_minor)::int AS amount_minor FROM booking_payments
          WHERE booking_id = ${bookingId}::uuid GROUP BY currency`
    })

    const collectedForRow = SqlSchema.findAll({
      Request: Schema.Struct({ target: Schema.String, manifestRowId: Schema.NullOr(Schema.String) }),
      Result: Collected,
      execute: ({ manifestRowId, target }) =>
        sql`
          SELECT currency, sum(amount_minor)::int AS amount_minor FROM (
            SELECT l.currency, l.amount_minor FROM payment_links l
            WHERE l.target = ${target} AND l.state = 'closed' AND l.closed_reason = 'paid'
            UNION ALL
            SELECT p.currency, p.amount_minor
            FROM manifest_rows r
            JOIN quickbook_sales s ON s.booking_id = r.booking_id OR s.reference = r.external_reference
            JOIN tours t ON t.id = s.tour_id
            JOIN operators o ON o.id = t.operator_id AND o.booking_system_account_id = r.account_id
            JOIN quickbook_payments p ON p.sale_reference = s.reference AND p.role = 'sale'
              AND p.state IN ('verified', 'booking', 'confirmed')
            WHERE r.id = ${manifestRowId}::uuid
          ) collected GROUP BY currency`
    })

    const cancelling = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ cancelling: Schema.Boolean }),
      execute: (bookingId) =>
        sql`
          SELECT (b.status NOT IN ('CONFIRMED', 'RESERVED') OR ${sql.literal(CANCELLING)}) AS cancelling
          FROM bookings b WHERE b.id = ${bookingId}::uuid`
    })

    const bookingOfRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({
        account_id: Schema.String,
        reference: Schema.NullOr(Schema.String),
        booking_id: Schema.String
      }),
      execute: (manifestRowId) =>
        sql`SELECT account_id, reference, booking_id FROM manifest_rows WHERE id = ${manifestRowId}::uuid`
    })

    const owesNothing = SqlSchema.findOne({
      Request: LinkRow.pipe(Schema.pick("booking_id", "manifest_row_id", "kind")),
      Result: Schema.Struct({ owes_nothing: Schema.Boolean }),
      execute: (link) =>
        sql`
          SELECT CASE
            WHEN ${link.booking_id}::uuid IS NOT NULL THEN EXISTS (
              SELECT 1 FROM bookings b WHERE b.id = ${link.booking_id}::uuid AND (b.status NOT IN ('CONFIRMED', 'RESERVED')
                -- Cancelled with its refund still being finished (still CONFIRMED until it completes).
                OR EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id AND c.kind = 'cancel' AND c.state = 'done')
                OR (${link.kind} = 'deferred_balance' AND b.pay_later_status IS DISTINCT FROM 'upcoming'
                  AND b.pay_later_status IS DISTINCT FROM 'failed')))
            -- A booking only in the booking system: every line of it cancelled (its links are kept on its first row).
            ELSE NOT EXISTS (
              SELECT 1 FROM manifest_rows r JOIN manifest_rows line ON line.account_id = r.account_id AND line.booking_id = r.booking_id
              WHERE r.id = ${link.manifest_row_id}::uuid AND line.status <> 'CANCELLED')
          END AS owes_nothing`
    })

    return repoEdge("LinkTargetsRepo", {
      /** A service booking of these operators with a listed status (CANCELLED once its cancel has begun). */
      bookingTarget: (id: string, operatorIds: ReadonlyArray<string>) => bookingTarget({ id, operatorIds }),
      /** A manifest row of these operators. */
      rowTarget: (id: string, operatorIds: ReadonlyArray<string>) => rowTarget({ id, operatorIds }),
      /** The first manifest row of a booking-system booking: where its links are kept. */
      firstRowOf: (accountId: string, bookingId: string) =>
        Effect.map(firstRowOf({ accountId, bookingId }), Option.map((r) => r.id)),
      /** A service booking's payments on record (checkout, paid links), by currency. */
      collectedForBooking,
      /**
       * For a booking only in the booking system: its paid links, and the desk sale that made it
       * (POST /book: the sale's booking in the booking system, or the sale reference it carries as
       * external reference, in the account of the sale's tour), paid and not being returned; by
       * currency.
       */
      collectedForRow: (target: string, manifestRowId: string | null) => collectedForRow({ target, manifestRowId }),
      /** Whether a cancel of the booking has begun, or it is no longer live (a booking not found: true). */
      cancelling: (bookingId: string) =>
        Effect.map(cancelling(bookingId), Option.match({ onNone: () => true, onSome: (r) => r.cancelling })),
      /** Where the booking system keeps the booking of a manifest row. */
      bookingOfRow,
      /**
       * Whether what a link is for no longer owes what it asks: the booking cancelled (or its cancel
       * done, the refund still being finished), or for a `deferred_balance` its pay-later balance
       * collected or cancelled another way; a booking only in the booking system: every line cancelled.
       */
      owesNothing: (link: LinkRow) => Effect.map(owesNothing(link), Option.exists((r) => r.owes_nothing))
    })
  })
}) {}
