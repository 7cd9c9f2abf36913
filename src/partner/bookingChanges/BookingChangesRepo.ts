/**
 * Every statement on `booking_changes`, the progress record of a cancel or a reschedule
 * (migrations 0008, 0010; the states in ./rules.ts): the claim's reads and insert, the lease (set
 * when a change is claimed, taken over by recovery; past it the request that made the change is
 * assumed dead), the state transitions, and the rows as each kind reads them. A call inside a
 * caller's `sql.withTransaction` joins that transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge } from "../../db/repoEdge.js"
import { BookingChangeConfig } from "./config.js"
import { ABANDONABLE_STATES, ANY_OPEN_STATE, type ChangeKind, type ChangesSeen, OPEN_STATES } from "./rules.js"

const Kind = Schema.Literal("cancel", "reschedule")
const RefundOutcome = Schema.Literal("refunded", "none", "pending")

/** A cancel's row. */
export const CancelChange = Schema.Struct({
  id: Schema.String,
  booking_id: Schema.String,
  state: Schema.Literal("releasing", "released", "done", "abandoned"),
  key_id: Schema.NullOr(Schema.String),
  /** The booking-system account and booking the seats are released in (null: a booking it never knew). */
  account_id: Schema.NullOr(Schema.String),
  booking_reference: Schema.NullOr(Schema.String),
  reason: Schema.NullOr(Schema.String),
  refund_outcome: Schema.NullOr(RefundOutcome),
  lease_expired: Schema.Boolean
})
export type CancelChange = typeof CancelChange.Type

/** A reschedule's row: the line, where it was and where it goes. */
export const RescheduleChange = Schema.Struct({
  id: Schema.String,
  booking_id: Schema.String,
  state: Schema.Literal("moving", "moved", "done", "abandoned"),
  key_id: Schema.NullOr(Schema.String),
  account_id: Schema.String,
  booking_reference: Schema.String,
  line_id: Schema.String,
  from_date: Schema.String,
  from_start_time: Schema.NullOr(Schema.String),
  from_rate_title: Schema.NullOr(Schema.String),
  to_date: Schema.String,
  to_start_time: Schema.NullOr(Schema.String),
  to_start_time_id: Schema.String,
  to_rate_id: Schema.NullOr(Schema.String),
  to_rate_title: Schema.NullOr(Schema.String),
  change_rate: Schema.Boolean,
  lease_expired: Schema.Boolean
})
export type RescheduleChange = typeof RescheduleChange.Type

const NewCancel = Schema.Struct({
  kind: Schema.Literal("cancel"),
  bookingId: Schema.String,
  keyId: Schema.NullOr(Schema.String),
  accountId: Schema.NullOr(Schema.String),
  bookingReference: Schema.NullOr(Schema.String),
  reason: Schema.String
})

const Departure = Schema.Struct({
  date: Schema.String,
  startTime: Schema.NullOr(Schema.String),
  startTimeId: Schema.NullOr(Schema.String),
  rateId: Schema.NullOr(Schema.String),
  rateTitle: Schema.NullOr(Schema.String)
})

const NewReschedule = Schema.Struct({
  kind: Schema.Literal("reschedule"),
  bookingId: Schema.String,
  keyId: Schema.NullOr(Schema.String),
  accountId: Schema.String,
  bookingReference: Schema.String,
  lineId: Schema.String,
  from: Departure,
  to: Departure,
  changeRate: Schema.Boolean
})

/** The row a claim inserts, open, by kind. */
export const NewChange = Schema.Union(NewCancel, NewReschedule)
export type NewChange = typeof NewChange.Type

const ById = Schema.Struct({ id: Schema.String, lock: Schema.Boolean })

export class BookingChangesRepo extends Effect.Service<BookingChangesRepo>()("Partner/BookingChangesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { leaseSeconds } = yield* BookingChangeConfig

    /** The end of a lease taken now. */
    const leaseFromNow = sql`now() + make_interval(secs => ${leaseSeconds})`
    const forUpdate = (lock: boolean) => (lock ? sql`FOR UPDATE` : sql``)

    const seenRow = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({
        recorded: Schema.Number,
        id: Schema.NullOr(Schema.String),
        kind: Schema.NullOr(Kind),
        lease_expired: Schema.NullOr(Schema.Boolean)
      }),
      execute: (bookingId) =>
        sql`
          SELECT (SELECT count(*)::int FROM booking_changes WHERE booking_id = ${bookingId}::uuid) AS recorded,
            c.id, c.kind, c.lease_until < now() AS lease_expired
          FROM (SELECT 1) AS one
          LEFT JOIN booking_changes c ON c.booking_id = ${bookingId}::uuid AND c.state IN ${sql.in(ANY_OPEN_STATE)}`
    })

    /** The booking's changes now: how many were recorded, and the open one if any. */
    const seen = (bookingId: string) =>
      Effect.map(seenRow(bookingId), (row): ChangesSeen => ({
        bookingId,
        recorded: row.recorded,
        open: row.id === null || row.kind === null
          ? undefined
          : { id: row.id, kind: row.kind, leaseExpired: row.lease_expired === true }
      }))

    /** The booking's row lock: claims of one booking are taken one after the other, across instances. */
    const lockBooking = SqlSchema.void({
      Request: Schema.String,
      execute: (bookingId) => sql`SELECT id FROM bookings WHERE id = ${bookingId}::uuid FOR NO KEY UPDATE`
    })

    /** The change, open and leased from now; None when the booking has an open change already (the unique index). */
    const insert = SqlSchema.findOne({
      Request: NewChange,
      Result: IdRow,
      execute: (c) =>
        c.kind === "cancel"
          ? sql`
            INSERT INTO booking_changes (booking_id, kind, state, key_id, account_id, booking_reference, reason, lease_until)
            VALUES (${c.bookingId}::uuid, 'cancel', 'releasing', ${c.keyId}, ${c.accountId}, ${c.bookingReference}, ${c.reason},
              ${leaseFromNow})
            ON CONFLICT DO NOTHING
            RETURNING id`
          : sql`
            INSERT INTO booking_changes (
              booking_id, kind, state, key_id, request_id, account_id, booking_reference, line_id,
              from_date, from_start_time, from_start_time_id, from_rate_id, from_rate_title,
              to_date, to_start_time, to_start_time_id, to_rate_id, to_rate_title, change_rate, lease_until)
            VALUES (
              ${c.bookingId}::uuid, 'reschedule', 'moving', ${c.keyId}, null, ${c.accountId}::uuid, ${c.bookingReference}, ${c.lineId},
              ${c.from.date}::date, ${c.from.startTime}, ${c.from.startTimeId}, ${c.from.rateId}, ${c.from.rateTitle},
              ${c.to.date}::date, ${c.to.startTime}, ${c.to.startTimeId}, ${c.to.rateId}, ${c.to.rateTitle},
              ${c.changeRate}, ${leaseFromNow})
            ON CONFLICT DO NOTHING
            RETURNING id`
    })

    const findCancel = SqlSchema.findOne({
      Request: ById,
      Result: CancelChange,
      execute: ({ id, lock }) =>
        sql`
          SELECT id, booking_id, state, key_id, account_id, booking_reference, reason, refund_outcome,
            lease_until < now() AS lease_expired
          FROM booking_changes WHERE id = ${id}::uuid AND kind = 'cancel' ${forUpdate(lock)}`
    })

    const findReschedule = SqlSchema.findOne({
      Request: ById,
      Result: RescheduleChange,
      execute: ({ id, lock }) =>
        sql`
          SELECT id, booking_id, state, key_id, account_id, booking_reference, line_id, from_date, from_start_time,
            from_rate_title, to_date, to_start_time, to_start_time_id, to_rate_id, to_rate_title, change_rate,
            lease_until < now() AS lease_expired
          FROM booking_changes WHERE id = ${id}::uuid AND kind = 'reschedule' ${forUpdate(lock)}`
    })

    /** Open changes of a kind whose lease is over, oldest first (the recovery scan). */
    const stale = SqlSchema.findAll({
      Request: Kind,
      Result: IdRow,
      execute: (kind) =>
        sql`
          SELECT id FROM booking_changes
          WHERE kind = ${kind} AND state IN ${sql.in(OPEN_STATES[kind])} AND lease_until < now()
          ORDER BY created_at LIMIT 100`
    })

    /** Takes over a change whose lease is over (a new lease from now); None: it is not (or no longer) so. */
    const takeOver = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, kind: Kind }),
      Result: IdRow,
      execute: ({ id, kind }) =>
        sql`
          UPDATE booking_changes SET lease_until = ${leaseFromNow}
          WHERE id = ${id}::uuid AND state IN ${sql.in(OPEN_STATES[kind])} AND lease_until < now() RETURNING id`
    })

    /** Whether a change is still open and past its lease. */
    const isStale = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, kind: Kind }),
      Result: IdRow,
      execute: ({ id, kind }) =>
        sql`
          SELECT id FROM booking_changes
          WHERE id = ${id}::uuid AND state IN ${sql.in(OPEN_STATES[kind])} AND lease_until < now()`
    })

    const countAttempt = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE booking_changes SET attempts = attempts + 1 WHERE id = ${id}::uuid`
    })

    const noteError = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, detail: Schema.String }),
      execute: ({ detail, id }) =>
        sql`UPDATE booking_changes SET last_error = ${detail.slice(0, 1000)} WHERE id = ${id}::uuid`
    })

    /** releasing → released (the booking system released the seats); None: it was not `releasing`. */
    const markReleased = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) =>
        sql`
          UPDATE booking_changes SET state = 'released', moved_at = now()
          WHERE id = ${id}::uuid AND state = 'releasing' RETURNING id`
    })

    /** moving → moved (the booking system moved the line). */
    const markMoved = SqlSchema.void({
      Request: Schema.String,
      execute: (id) =>
        sql`UPDATE booking_changes SET state = 'moved', moved_at = now() WHERE id = ${id}::uuid AND state = 'moving'`
    })

    /** → abandoned, from a state it may be abandoned from: nothing changed in the booking system. */
    const abandon = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, kind: Kind, reason: Schema.String }),
      execute: ({ id, kind, reason }) =>
        sql`
          UPDATE booking_changes SET state = 'abandoned', finished_at = now(), last_error = ${reason.slice(0, 1000)}
          WHERE id = ${id}::uuid AND state IN ${sql.in(ABANDONABLE_STATES[kind])}`
    })

    /** → done, with a cancel's refund outcome (null for a reschedule); callers hold the row's lock. */
    const markDone = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, refundOutcome: Schema.NullOr(RefundOutcome) }),
      execute: ({ id, refundOutcome }) =>
        sql`
          UPDATE booking_changes SET state = 'done', refund_outcome = ${refundOutcome}, finished_at = now(),
            moved_at = coalesce(moved_at, now())
          WHERE id = ${id}::uuid`
    })

    /** A done cancel's latest refund outcome (its refunds moved on after it completed). */
    const setRefundOutcome = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, refundOutcome: RefundOutcome }),
      execute: ({ id, refundOutcome }) =>
        sql`UPDATE booking_changes SET refund_outcome = ${refundOutcome} WHERE id = ${id}::uuid`
    })

    /** The booking's last completed cancel, if any. */
    const lastDoneCancel = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, refund_outcome: Schema.NullOr(RefundOutcome) }),
      execute: (bookingId) =>
        sql`
          SELECT id, refund_outcome FROM booking_changes
          WHERE booking_id = ${bookingId}::uuid AND kind = 'cancel' AND state = 'done'
          ORDER BY finished_at DESC LIMIT 1`
    })

    /** Whether a cancel of the booking has begun (claimed, seats released, or done). */
    const cancelBegun = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ begun: Schema.Boolean }),
      execute: (bookingId) =>
        sql`
          SELECT EXISTS (SELECT 1 FROM booking_changes WHERE booking_id = ${bookingId}::uuid AND kind = 'cancel'
            AND state IN ('releasing', 'released', 'done')) AS begun`
    })

    return repoEdge("BookingChangesRepo", {
      seen,
      lockBooking,
      insert,
      findCancel: (id: string, lock = false) => findCancel({ id, lock }),
      findReschedule: (id: string, lock = false) => findReschedule({ id, lock }),
      stale: (kind: ChangeKind) => Effect.map(stale(kind), (rows) => rows.map((r) => r.id)),
      takeOver: (id: string, kind: ChangeKind) => Effect.map(takeOver({ id, kind }), Option.isSome),
      isStale: (id: string, kind: ChangeKind) => Effect.map(isStale({ id, kind }), Option.isSome),
      countAttempt,
      noteError: (id: string, detail: string) => noteError({ id, detail }),
      markReleased: (id: string) => Effect.map(markReleased(id), Option.isSome),
      markMoved,
      abandon: (id: string, kind: ChangeKind, reason: string) => abandon({ id, kind, reason }),
      markDone: (id: string, refundOutcome: typeof RefundOutcome.Type | null) => markDone({ id, refundOutcome }),
      setRefundOutcome: (id: string, refundOutcome: typeof RefundOutcome.Type) =>
        setRefundOutcome({ id, refundOutcome }),
      lastDoneCancel,
      cancelBegun: (bookingId: string) => Effect.map(cancelBegun(bookingId), (r) => r.begun)
    })
  })
}) {}
