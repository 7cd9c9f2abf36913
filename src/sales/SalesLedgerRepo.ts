/**
 * All SQL of the other-channel sales ledger (SalesLedger): booking lines by creation upserted into
 * `sales_ledger_lines` (`changed_at` moves only when a stored field changed), lines a refresh no
 * longer finds in its range cancelled, and each account's coverage and last outcome in
 * `sales_ledger_accounts` (migration 0023). The lines of one range and the coverage they earn are
 * one transaction: coverage never claims lines that are not stored. Typed with SqlSchema; database
 * errors are defects at the edge (repoEdge), except while storing a range: the database refusing
 * what a booking system sent is `LedgerNotStored`, which fails that account alone.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Predicate, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import { lineOwnerJoin, type LineOwners } from "../mirror/lineOwner.js"
import type { BookingLine } from "../ports/BookingSystem.js"

/** The database refused an account's lines: nothing of that range was stored (one transaction). */
export class LedgerNotStored extends Data.TaggedError("LedgerNotStored")<{ readonly cause: SqlError }> {
  override get message() {
    return this.cause.message
  }
}

/** Upserts are sent in chunks of this many lines (one JSON parameter each). */
const CHUNK = 5000

const DAY_MS = 86_400_000

/** The instant a UTC day starts, and the day after a UTC day. */
export const dayStart = (day: string) => new Date(`${day}T00:00:00Z`)
export const addUtcDays = (day: string, n: number) =>
  new Date(dayStart(day).getTime() + n * DAY_MS).toISOString().slice(0, 10)

const toRecord = (l: BookingLine) => ({
  line_id: l.lineId,
  booking_id: l.bookingId,
  external_reference: l.externalReference,
  product_id: l.productId,
  status: l.status,
  channel_class: l.channel.class,
  channel_title: l.channel.title,
  participants: l.participants,
  total_minor: l.totalMinor,
  currency: l.currency,
  created_at: l.createdAt.toISOString()
})

export const AccountState = Schema.Struct({
  account_id: Schema.String,
  covered_from: Schema.NullOr(Schema.String),
  covered_until: Schema.NullOr(Schema.DateFromSelf),
  last_attempt_at: Schema.NullOr(Schema.DateFromSelf),
  last_outcome: Schema.NullOr(Schema.Literal("ok", "failed")),
  last_error: Schema.NullOr(Schema.String)
})
export type AccountState = typeof AccountState.Type

/** What a range's lines earn once stored: a forward refresh moves `covered_until`, a backfill step `covered_from`. */
export type Coverage =
  | { readonly kind: "forward"; readonly until: Date }
  | { readonly kind: "backfill" }

export interface StoredCounts {
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
}

const refused = <A, E, R>(self: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, E | LedgerNotStored, R> =>
  Effect.catchIf(
    self,
    (e): e is SqlError => Predicate.isTagged(e, "SqlError"),
    (e) => Effect.fail(new LedgerNotStored({ cause: e }))
  )

export class SalesLedgerRepo extends Effect.Service<SalesLedgerRepo>()("Sales/SalesLedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsertChunk = (accountId: string, owners: LineOwners, lines: string) =>
      SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({ inserted: Schema.Number, updated: Schema.Number }),
        execute: (json) =>
          sql`
            WITH input AS (
              SELECT * FROM jsonb_to_recordset(${json}::jsonb) AS x(
                line_id text, booking_id text, external_reference text, product_id text, status text,
                channel_class text, channel_title text, participants integer, total_minor bigint, currency text,
                created_at timestamptz)
            ),
            upserted AS (
              INSERT INTO sales_ledger_lines AS r (
                account_id, line_id, booking_id, external_reference, operator_id, tour_id, product_id, status,
                channel_class, channel_title, participants, total_minor, currency, created_at, changed_at, synced_at
              )
              SELECT ${accountId}::uuid, i.line_id, i.booking_id, i.external_reference, o.id, t.id, i.product_id,
                i.status, i.channel_class, i.channel_title, i.participants, i.total_minor, i.currency, i.created_at,
                now(), now()
              FROM input i
              ${lineOwnerJoin(sql, owners)}
              ON CONFLICT (account_id, line_id) DO UPDATE SET
                booking_id = excluded.booking_id, external_reference = excluded.external_reference,
                operator_id = excluded.operator_id, tour_id = excluded.tour_id, product_id = excluded.product_id,
                status = excluded.status, channel_class = excluded.channel_class,
                channel_title = excluded.channel_title, participants = excluded.participants,
                total_minor = excluded.total_minor, currency = excluded.currency, created_at = excluded.created_at,
                changed_at = CASE
                  WHEN (r.booking_id, r.external_reference, r.operator_id, r.tour_id, r.product_id, r.status,
                    r.channel_class, r.channel_title, r.participants, r.total_minor, r.currency, r.created_at)
                    IS DISTINCT FROM
                    (excluded.booking_id, excluded.external_reference, excluded.operator_id, excluded.tour_id,
                      excluded.product_id, excluded.status, excluded.channel_class, excluded.channel_title,
                      excluded.participants, excluded.total_minor, excluded.currency, excluded.created_at)
                  THEN now() ELSE r.changed_at END,
                synced_at = now()
              RETURNING (xmax = 0) AS inserted, (changed_at = now()) AS changed
            )
            SELECT count(*) FILTER (WHERE inserted)::int AS inserted,
              count(*) FILTER (WHERE changed AND NOT inserted)::int AS updated
            FROM upserted`
      })(lines)

    /** Lines of the account created in [from, to) not among `seen` (JSON) and not cancelled yet become CANCELLED. */
    const cancelGone = SqlSchema.single({
      Request: Schema.Struct({ accountId: Schema.String, from: Schema.String, to: Schema.String, seen: Schema.String }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (r) =>
        sql`
          WITH cancelled AS (
            UPDATE sales_ledger_lines SET status = 'CANCELLED', changed_at = now(), synced_at = now()
            WHERE account_id = ${r.accountId}
              AND created_at >= ${r.from}::timestamptz AND created_at < ${r.to}::timestamptz
              AND status <> 'CANCELLED'
              AND line_id NOT IN (SELECT jsonb_array_elements_text(${r.seen}::jsonb))
            RETURNING 1
          )
          SELECT count(*)::int AS n FROM cancelled`
    })

    /**
     * A forward refresh covered [from, until): `covered_until` moves up to `until`; `covered_from`
     * moves back to `from` when the range joins what was covered, else starts again at `from`.
     */
    const coverForward = SqlSchema.void({
      Request: Schema.Struct({ accountId: Schema.String, from: Schema.String, until: Schema.String }),
      execute: (r) =>
        sql`
          INSERT INTO sales_ledger_accounts AS a (
            account_id, covered_from, covered_until, last_attempt_at, last_outcome, last_error, updated_at)
          VALUES (${r.accountId}, ${r.from}::date, ${r.until}::timestamptz, now(), 'ok', NULL, now())
          ON CONFLICT (account_id) DO UPDATE SET
            covered_from = CASE
              WHEN a.covered_from IS NOT NULL AND a.covered_until IS NOT NULL
                AND a.covered_until >= (excluded.covered_from::timestamp AT TIME ZONE 'UTC')
              THEN least(a.covered_from, excluded.covered_from)
              ELSE excluded.covered_from END,
            covered_until = CASE
              WHEN a.covered_from IS NOT NULL AND a.covered_until IS NOT NULL
                AND a.covered_until >= (excluded.covered_from::timestamp AT TIME ZONE 'UTC')
              THEN greatest(a.covered_until, excluded.covered_until)
              ELSE excluded.covered_until END,
            last_attempt_at = now(), last_outcome = 'ok', last_error = NULL, updated_at = now()`
    })

    /** A backfill step covered the days [from, to]: `covered_from` moves back to `from` when that joins the covered days. */
    const coverBackfill = SqlSchema.void({
      Request: Schema.Struct({ accountId: Schema.String, from: Schema.String, to: Schema.String }),
      execute: (r) =>
        sql`
          UPDATE sales_ledger_accounts SET
            covered_from = least(covered_from, ${r.from}::date),
            last_attempt_at = now(), last_outcome = 'ok', last_error = NULL, updated_at = now()
          WHERE account_id = ${r.accountId} AND covered_from IS NOT NULL
            AND covered_from <= ${r.to}::date + 1`
    })

    /**
     * One range of creation days [from, to] of one account, in one transaction: its lines upserted
     * (in chunks), those no longer listed cancelled, the coverage they earn recorded.
     */
    const storeRange = (input: {
      readonly accountId: string
      readonly owners: LineOwners
      readonly from: string
      readonly to: string
      readonly lines: ReadonlyArray<BookingLine>
      readonly coverage: Coverage
    }) =>
      Effect.gen(function*() {
        // One account's ranges are stored one at a time (a recent refresh and a backfill step may
        // overlap): no two upserts of the same lines deadlock, and each sees the other's coverage.
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`sales_ledger:${input.accountId}`}))`
        let inserted = 0
        let updated = 0
        for (let i = 0; i < input.lines.length; i += CHUNK) {
          const chunk = input.lines.slice(i, i + CHUNK)
          const counts = yield* upsertChunk(input.accountId, input.owners, JSON.stringify(chunk.map(toRecord)))
          inserted += counts.inserted
          updated += counts.updated
        }
        const { n: cancelled } = yield* cancelGone({
          accountId: input.accountId,
          from: dayStart(input.from).toISOString(),
          to: dayStart(addUtcDays(input.to, 1)).toISOString(),
          seen: JSON.stringify(input.lines.map((l) => l.lineId))
        })
        if (input.coverage.kind === "forward") {
          yield* coverForward({
            accountId: input.accountId,
            from: input.from,
            until: input.coverage.until.toISOString()
          })
        } else {
          yield* coverBackfill({ accountId: input.accountId, from: input.from, to: input.to })
        }
        return { inserted, updated, cancelled } satisfies StoredCounts
      }).pipe(sql.withTransaction, refused)

    /** The account's last attempt failed: recorded, its coverage kept. */
    const recordFailure = SqlSchema.void({
      Request: Schema.Struct({ accountId: Schema.String, error: Schema.String }),
      execute: (r) =>
        sql`
          INSERT INTO sales_ledger_accounts AS a (account_id, last_attempt_at, last_outcome, last_error, updated_at)
          VALUES (${r.accountId}, now(), 'failed', ${r.error}, now())
          ON CONFLICT (account_id) DO UPDATE SET
            last_attempt_at = now(), last_outcome = 'failed', last_error = excluded.last_error, updated_at = now()`
    })

    /** The ledger state of the accounts (those without a row have none yet). */
    const states = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: AccountState,
      execute: (ids) =>
        sql`
          SELECT account_id, covered_from::text AS covered_from, covered_until, last_attempt_at, last_outcome,
            last_error
          FROM sales_ledger_accounts
          WHERE account_id = ANY(${`{${ids.join(",")}}`}::uuid[])`
    })

    return repoEdge("SalesLedgerRepo", { storeRange, recordFailure, states })
  })
}) {}
