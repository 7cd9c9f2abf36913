/**
 * All SQL of the mirror refresh (Mirror): the booking lines of an account's window upserted into
 * `manifest_rows`, lines gone from the booking system cancelled, the days marked synced
 * (`mirror_days`), and each account's run in `mirror_runs` (migrations 0003, 0004). Typed with
 * SqlSchema; a database error is a defect at its edge (repoEdge: a span per method), once, except
 * while storing an account's lines: the database refusing what a booking system sent (e.g. a NUL in
 * a guest name) is `LinesNotStored`, which fails that account alone.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Predicate, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import type { MirroredAccount } from "../operators/BookingSystemAccounts.js"
import type { BookingLine } from "../ports/BookingSystem.js"
import { lineOwnerJoin } from "./lineOwner.js"

export interface DayWindow {
  readonly from: string
  readonly to: string
}

/** The database refused to store an account's lines: nothing of them was stored (one transaction). */
export class LinesNotStored extends Data.TaggedError("LinesNotStored")<{ readonly cause: SqlError }> {
  override get message() {
    return this.cause.message
  }
}

export const MissingLine = Schema.Struct({
  line_id: Schema.String,
  reference: Schema.NullOr(Schema.String),
  booking_id: Schema.String
})
export type MissingLine = typeof MissingLine.Type

/** Upserts are sent in chunks of this many lines (one JSON parameter each). */
const CHUNK = 5000

/** A line as the upsert statement reads it (jsonb_to_recordset column names). */
const toRecord = (l: BookingLine) => ({
  line_id: l.lineId,
  booking_id: l.bookingId,
  reference: l.bookingReference,
  external_reference: l.externalReference,
  status: l.status,
  product_id: l.productId,
  product_title: l.productTitle,
  rate_id: l.rateId,
  rate_title: l.rateTitle,
  start_time_id: l.startTimeId,
  departure_date: l.date,
  start_time: l.startTime,
  participants: l.participants,
  pax_breakdown: l.pax.length === 0 ? null : l.pax.map((p) => ({ title: p.title, quantity: p.quantity })),
  channel_class: l.channel.class,
  channel_source: l.channel.source,
  channel_title: l.channel.title,
  guest_name: l.guest.name,
  guest_email: l.guest.email,
  guest_phone: l.guest.phone,
  pickup_place: l.pickup?.place ?? null,
  pickup_time: l.pickup?.time ?? null,
  payment_status: l.paymentStatus,
  total_minor: l.totalMinor,
  currency: l.currency,
  booked_at: l.createdAt.toISOString(),
  source_updated_at: l.updatedAt?.toISOString() ?? null
})

/** While an account's lines are stored, the database refusing them fails the account; a row that does not decode is a bug. */
const refusedLines = <A, E, R>(self: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, E | LinesNotStored, R> =>
  Effect.catchIf(
    self,
    (e): e is SqlError => Predicate.isTagged(e, "SqlError"),
    (e) => Effect.fail(new LinesNotStored({ cause: e }))
  )

const Window = Schema.Struct({ accountId: Schema.String, from: Schema.String, to: Schema.String })

const Count = Schema.Struct({ n: Schema.Number })

export class MirrorRepo extends Effect.Service<MirrorRepo>()("Mirror/MirrorRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Upserts one chunk: how many lines were new, how many changed, how many are now cancelled. */
    const upsertChunk = SqlSchema.single({
      Request: Schema.Struct({
        accountId: Schema.String,
        /** The account's operators; the primary one owns the lines of no operator's tour. */
        operatorIds: Schema.Array(Schema.String),
        primaryOperatorId: Schema.String,
        /** The lines as JSON (toRecord). */
        lines: Schema.String
      }),
      Result: Schema.Struct({ inserted: Schema.Number, cancelled: Schema.Number, changed: Schema.Number }),
      execute: (r) =>
        sql`
          WITH input AS (
            SELECT * FROM jsonb_to_recordset(${r.lines}::jsonb) AS x(
              line_id text, booking_id text, reference text, external_reference text, status text,
              product_id text, product_title text, rate_id text, rate_title text, start_time_id text,
              departure_date date, start_time text, participants integer, pax_breakdown jsonb,
              channel_class text, channel_source text, channel_title text,
              guest_name text, guest_email text, guest_phone text, pickup_place text, pickup_time text,
              payment_status text, total_minor bigint, currency text, booked_at timestamptz, source_updated_at timestamptz)
          ),
          linked AS (
            SELECT unnest(${`{${r.operatorIds.join(",")}}`}::uuid[]) AS id
          ),
          upserted AS (
            INSERT INTO manifest_rows AS r (
              account_id, line_id, booking_id, reference, external_reference, operator_id, tour_id, service_booking_id,
              status, product_id, product_title, rate_id, rate_title, start_time_id, departure_date, start_time, timezone,
              participants, pax_breakdown, channel_class, channel_source, channel_title, guest_name, guest_email,
              guest_phone, pickup_place, pickup_time, payment_status, total_minor, currency, booked_at, source_updated_at,
              cancelled_at
            )
            SELECT ${r.accountId}::uuid, i.line_id, i.booking_id, i.reference, i.external_reference, o.id, t.id, b.id,
              i.status, i.product_id, i.product_title, i.rate_id, i.rate_title, i.start_time_id, i.departure_date,
              i.start_time, o.timezone, i.participants, i.pax_breakdown, i.channel_class, i.channel_source,
              i.channel_title, i.guest_name, i.guest_email, i.guest_phone, i.pickup_place, i.pickup_time,
              i.payment_status, i.total_minor, i.currency, i.booked_at, i.source_updated_at,
              CASE WHEN i.status = 'CANCELLED' THEN now() END
            FROM input i
            ${lineOwnerJoin(sql, r)}
            LEFT JOIN bookings b
              ON b.confirmation_code = i.external_reference AND b.operator_id IN (SELECT id FROM linked)
            ON CONFLICT (account_id, line_id) DO UPDATE SET
              booking_id = excluded.booking_id, reference = excluded.reference,
              external_reference = excluded.external_reference, operator_id = excluded.operator_id,
              tour_id = excluded.tour_id, service_booking_id = excluded.service_booking_id, status = excluded.status,
              product_id = excluded.product_id, product_title = excluded.product_title, rate_id = excluded.rate_id,
              rate_title = excluded.rate_title, start_time_id = excluded.start_time_id,
              departure_date = excluded.departure_date, start_time = excluded.start_time, timezone = excluded.timezone,
              participants = excluded.participants, pax_breakdown = excluded.pax_breakdown,
              channel_class = excluded.channel_class, channel_source = excluded.channel_source,
              channel_title = excluded.channel_title, guest_name = excluded.guest_name,
              guest_email = excluded.guest_email, guest_phone = excluded.guest_phone,
              pickup_place = excluded.pickup_place, pickup_time = excluded.pickup_time,
              payment_status = excluded.payment_status, total_minor = excluded.total_minor,
              currency = excluded.currency, booked_at = excluded.booked_at,
              source_updated_at = excluded.source_updated_at,
              cancelled_at = CASE WHEN excluded.status = 'CANCELLED' THEN coalesce(r.cancelled_at, now()) END,
              synced_at = now()
            WHERE (r.booking_id, r.reference, r.external_reference, r.operator_id, r.tour_id, r.service_booking_id,
                r.status, r.product_id, r.product_title, r.rate_id, r.rate_title, r.start_time_id, r.departure_date,
                r.start_time, r.timezone, r.participants, r.pax_breakdown, r.channel_class, r.channel_source,
                r.channel_title, r.guest_name, r.guest_email, r.guest_phone, r.pickup_place, r.pickup_time,
                r.payment_status, r.total_minor, r.currency, r.booked_at, r.source_updated_at)
              IS DISTINCT FROM
              (excluded.booking_id, excluded.reference, excluded.external_reference, excluded.operator_id,
                excluded.tour_id, excluded.service_booking_id, excluded.status, excluded.product_id,
                excluded.product_title, excluded.rate_id, excluded.rate_title, excluded.start_time_id,
                excluded.departure_date, excluded.start_time, excluded.timezone, excluded.participants,
                excluded.pax_breakdown, excluded.channel_class, excluded.channel_source, excluded.channel_title,
                excluded.guest_name, excluded.guest_email, excluded.guest_phone, excluded.pickup_place,
                excluded.pickup_time, excluded.payment_status, excluded.total_minor, excluded.currency,
                excluded.booked_at, excluded.source_updated_at)
            RETURNING (xmax = 0) AS inserted, (xmax <> 0 AND r.status = 'CANCELLED' AND r.cancelled_at = now()) AS cancelled
          )
          SELECT count(*) FILTER (WHERE inserted)::int AS inserted, count(*) FILTER (WHERE cancelled)::int AS cancelled,
            count(*)::int AS changed
          FROM upserted`
    })

    const cancelLinesOf = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, lineIds: Schema.String }),
      Result: Count,
      execute: (r) =>
        sql`
          WITH cancelled AS (
            UPDATE manifest_rows SET status = 'CANCELLED', cancelled_at = now(), synced_at = now()
            WHERE account_id = ${r.accountId} AND status <> 'CANCELLED'
              AND line_id IN (SELECT jsonb_array_elements_text(${r.lineIds}::jsonb))
            RETURNING id
          )
          SELECT count(*)::int AS n FROM cancelled`
    })

    const markSynced = SqlSchema.void({
      Request: Window,
      execute: (w) =>
        sql`
          INSERT INTO mirror_days (account_id, departure_date, synced_at)
          SELECT ${w.accountId}, d::date, now()
          FROM generate_series(${w.from}::date, ${w.to}::date, interval '1 day') AS d
          ON CONFLICT (account_id, departure_date) DO UPDATE SET synced_at = excluded.synced_at`
    })

    /** Lines of the window not among `seen`, not cancelled yet, with their booking's reference. */
    const selectMissingLines = SqlSchema.findAll({
      /** `seen`: the line ids the booking system listed, as JSON. */
      Request: Schema.Struct({ ...Window.fields, seen: Schema.String }),
      Result: MissingLine,
      execute: (r) =>
        sql`
          SELECT line_id, reference, booking_id FROM manifest_rows
          WHERE account_id = ${r.accountId}
            AND departure_date BETWEEN ${r.from}::date AND ${r.to}::date
            AND status <> 'CANCELLED'
            AND line_id NOT IN (SELECT jsonb_array_elements_text(${r.seen}::jsonb))`
    })
    const missingLines = (r: Parameters<typeof selectMissingLines>[0]) => refusedLines(selectMissingLines(r))

    /**
     * Everything one refresh of one account found, in one transaction: the lines upserted (in
     * chunks), the lines the booking system no longer has cancelled, the window's days synced.
     */
    const store = (
      m: MirroredAccount,
      window: DayWindow,
      lines: ReadonlyArray<BookingLine>,
      gone: ReadonlyArray<string>
    ) =>
      Effect.gen(function*() {
        const [primary] = m.operators
        if (primary === undefined) return yield* Effect.dieMessage(`account ${m.account.id} has no operator`)
        const account = {
          accountId: m.account.id,
          operatorIds: m.operators.map((o) => o.id),
          primaryOperatorId: primary.id
        }
        let inserted = 0
        let updated = 0
        let cancelled = 0
        for (let i = 0; i < lines.length; i += CHUNK) {
          const chunk = lines.slice(i, i + CHUNK)
          const counts = yield* upsertChunk({ ...account, lines: JSON.stringify(chunk.map(toRecord)) })
          inserted += counts.inserted
          // A line the booking system now reports cancelled counts as cancelled, not as changed.
          cancelled += counts.cancelled
          updated += counts.changed - counts.inserted - counts.cancelled
        }
        if (gone.length > 0) {
          cancelled += (yield* cancelLinesOf({ accountId: m.account.id, lineIds: JSON.stringify(gone) })).n
        }
        yield* markSynced({ accountId: m.account.id, ...window })
        return { inserted, updated, cancelled }
      }).pipe(sql.withTransaction, refusedLines)

    /** Opens the account's `mirror_runs` row (outcome `running`). */
    const startRun = SqlSchema.single({
      Request: Schema.Struct({
        ...Window.fields,
        jobRunId: Schema.NullOr(Schema.String),
        kind: Schema.Literal("near_term", "nightly", "manual")
      }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (r) =>
        sql`
          INSERT INTO mirror_runs (account_id, job_run_id, kind, date_from, date_to, started_at, outcome)
          VALUES (${r.accountId}, ${r.jobRunId}, ${r.kind}, ${r.from}, ${r.to}, now(), 'running')
          RETURNING id`
    })

    const finishRun = SqlSchema.void({
      Request: Schema.Struct({
        runId: Schema.String,
        outcome: Schema.Literal("ok", "failed"),
        linesSeen: Schema.Number,
        inserted: Schema.Number,
        updated: Schema.Number,
        cancelled: Schema.Number,
        error: Schema.NullOr(Schema.String)
      }),
      execute: (r) =>
        sql`
          UPDATE mirror_runs SET finished_at = now(), outcome = ${r.outcome}, lines_seen = ${r.linesSeen},
            inserted = ${r.inserted}, updated = ${r.updated}, cancelled = ${r.cancelled}, error = ${r.error}
          WHERE id = ${r.runId}`
    })

    return repoEdge("MirrorRepo", { missingLines, store, startRun, finishRun })
  })
}) {}
