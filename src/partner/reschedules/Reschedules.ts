/**
 * Reschedules (spec §2 "Reschedule options", §3, §4): the options of one day and the move itself.
 *
 * The booking system is the truth about the booking's line (its party, rate, start time and price)
 * and about a day's departures: `options` reads the line and ONE day of availability; the rules are
 * plain functions in src/partner/reschedules/rules.ts.
 *
 * A reschedule records its progress in `booking_changes` (migration 0008) so that a crash at any
 * step is finished once:
 *   1. a row `moving` (with a lease) is committed before the booking system is asked to move, by the
 *      claim every change of a booking makes (src/partner/bookingChanges/claim.ts): only when no
 *      change of the booking is open and none was made since this request read it (else 409);
 *   2. the booking system moves the line; the row becomes `moved`;
 *   3. one transaction updates the booking and its mirror row, enqueues the guest and team emails
 *      (dedupe keys carry the row's id) and marks the row `done`.
 * A row left at `moving` or `moved` past its lease is finished by `recoverStale` (the
 * booking-change recovery job): it re-reads the booking system to see whether the line moved, then
 * completes step 3, or marks the row `abandoned` when nothing moved. Step 3 locks the row and does
 * nothing unless it is still open, so it runs at most once however often it is tried.
 *
 * Crash points (CRASH_AT, src/lib/CrashPoints.ts): `reschedule.after_move` (the booking system
 * moved the line, not yet recorded), `reschedule.after_moved` (recorded, booking and emails not yet).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either } from "effect"
import { BookingChangeConfig } from "../../config.js"
import { apiStatusOf } from "../bookings/booking.js"
import { NotPossible, notYours, Unavailable } from "../../domain/errors.js"
import { outboxKeys, teamLocale } from "../../email/rules.js"
import {
  checkReschedulable,
  dayOptions,
  decideMove,
  isAlreadyOn,
  isOnTarget,
  lineOf,
  NOT_RESCHEDULABLE,
  type RescheduleOption,
  type RescheduleRequest
} from "./rules.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import {
  BookingSystem,
  type BookingSystemAccount,
  type BookingSystemError,
  type BookingLine
} from "../../ports/BookingSystem.js"
import { toPgArray } from "../../db/sql.js"
import { claimChange, changeRunning, seenChanges, unchangedSince } from "../bookingChanges/claim.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { Outbox } from "../../email/Outbox.js"

export interface RescheduleOptionsBody {
  readonly id: string
  readonly date: string
  readonly current_date: string | null
  readonly reschedulable: boolean
  readonly available: boolean
  readonly price_differs: boolean
  readonly detail: string | null
  readonly options: ReadonlyArray<RescheduleOption>
}

export interface RescheduleResultBody {
  readonly id: string
  readonly status: string
  readonly date: string
  readonly start_time: string | null
  readonly previous_date: string | null
  readonly previous_start_time: string | null
  readonly already_on_date: boolean
}

interface BookingRow {
  readonly id: string
  readonly status: string
  readonly operator_id: string
  readonly experience_date: string | null
  readonly start_time: string | null
  readonly timezone: string
  readonly provider_reference: string | null
  readonly payment_strategy: "pay_now" | "pay_later"
  readonly pay_later_charge_at: Date | null
  readonly pay_later_paid_at: Date | null
  readonly product_id: string | null
  readonly account_id: string | null
  /** A cancel of the booking completed (its refund may still be open, so the status can still read CONFIRMED). */
  readonly cancel_done: boolean
}

interface ChangeRow {
  readonly id: string
  readonly booking_id: string
  readonly state: "moving" | "moved" | "done" | "abandoned"
  readonly key_id: string | null
  readonly account_id: string
  readonly booking_reference: string
  readonly line_id: string
  readonly from_date: string
  readonly from_start_time: string | null
  readonly from_rate_title: string | null
  readonly to_date: string
  readonly to_start_time: string | null
  readonly to_start_time_id: string
  readonly to_rate_id: string | null
  readonly to_rate_title: string | null
  readonly change_rate: boolean
  readonly lease_expired: boolean
}

export interface RecoverySummary {
  readonly found: number
  readonly completed: number
  readonly abandoned: number
  readonly pending: number
}

const unavailable = (what: string) =>
  new Unavailable({ detail: `the booking system did not answer (${what}); nothing changed; retry with the same Idempotency-Key` })

const isLinked = (b: BookingRow) => b.provider_reference !== null && b.product_id !== null && b.account_id !== null

const facts = (b: BookingRow) => ({
  status: b.cancel_done ? "CANCELLED" : b.status,
  experienceDate: b.experience_date,
  startTime: b.start_time,
  timezone: b.timezone,
  linked: isLinked(b),
  paymentStrategy: b.payment_strategy,
  payLaterChargeAt: b.pay_later_charge_at,
  payLaterPaidAt: b.pay_later_paid_at
})

export class Reschedules extends Effect.Service<Reschedules>()("Reschedules", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const { leaseSeconds } = yield* BookingChangeConfig

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const loadBooking = (id: string, operatorIds: ReadonlyArray<string>) =>
      sql<BookingRow>`
        SELECT b.id, b.status, b.operator_id, b.experience_date, b.start_time, b.timezone, b.provider_reference,
          b.payment_strategy, b.pay_later_charge_at, b.pay_later_paid_at,
          t.booking_system_product_id AS product_id, tour_operator.booking_system_account_id AS account_id,
          EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id AND c.kind = 'cancel' AND c.state = 'done') AS cancel_done
        FROM bookings b
        LEFT JOIN tours t ON t.id = b.tour_id
        LEFT JOIN operators tour_operator ON tour_operator.id = t.operator_id
        WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')`.pipe(
        Effect.orDie,
        Effect.flatMap(([row]) => (row ? Effect.succeed(row) : Effect.fail(notYours("booking"))))
      )

    const accountOf = (accountId: string) =>
      Effect.map(Effect.orDie(accounts.byId(accountId)), (a) => a.account)

    /** The booking's line in the booking system; Left: why it cannot be used (not linked any more). */
    const readLine = (account: BookingSystemAccount, reference: string, productId: string) =>
      bookingSystem.booking(account, reference).pipe(
        Effect.map((lines) => Either.fromNullable(lineOf(lines, productId), () => "the booking system has no live line of this tour in the booking")),
        Effect.catchTag("BookingSystemRejected", (e) =>
          Effect.succeed(Either.left(`the booking system refused to show the booking (${e.reason})`)))
      )

    /**
     * Why the booking system has no live line of the booking: a cancel of it has begun (claimed,
     * seats released, or done) since this request read the booking (it released the line in the
     * booking system), else what the booking system said. So a request that a cancel overtook
     * answers what the booking is, not what the booking system showed of the cancel's work.
     */
    const noLine = (bookingId: string, said: string) =>
      sql<{ cancelling: boolean }>`
        SELECT EXISTS (SELECT 1 FROM booking_changes WHERE booking_id = ${bookingId}::uuid AND kind = 'cancel'
          AND state IN ('releasing', 'released', 'done')) AS cancelling`.pipe(
        Effect.orDie,
        Effect.map(([row]) => (row?.cancelling === true ? NOT_RESCHEDULABLE.cancelled : said))
      )

    // ---------------------------------------------------------------------------------------------
    // Options

    const options = (id: string, date: string, operatorIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const b = yield* loadBooking(id, operatorIds)
        const base = { id: b.id, date, current_date: b.experience_date }
        const no = (detail: string, reschedulable: boolean): RescheduleOptionsBody => ({
          ...base,
          reschedulable,
          available: false,
          price_differs: false,
          detail,
          options: []
        })
        const at = yield* now
        const eligible = checkReschedulable(facts(b), at)
        if (Either.isLeft(eligible)) return no(eligible.left, false)
        const account = yield* accountOf(b.account_id!)
        const line = yield* readLine(account, b.provider_reference!, b.product_id!).pipe(
          Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(unavailable("reading the booking")))
        )
        if (Either.isLeft(line)) return no(yield* noLine(b.id, line.left), false)
        const departures = yield* bookingSystem.availability(account, { productId: b.product_id!, from: date, to: date }).pipe(
          Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(unavailable("reading availability"))),
          Effect.catchTag("BookingSystemRejected", (e) => Effect.dieMessage(`availability refused: ${e.detail}`))
        )
        const day = dayOptions(line.right, date, departures, b.timezone, at)
        return { ...base, reschedulable: true, ...day } satisfies RescheduleOptionsBody
      }).pipe(Effect.withSpan("Reschedules.options"))

    // ---------------------------------------------------------------------------------------------
    // Completing a change (step 3) and recovering one

    const loadChange = (id: string, lock: boolean) =>
      sql<ChangeRow>`
        SELECT id, booking_id, state, key_id, account_id, booking_reference, line_id, from_date, from_start_time,
          from_rate_title, to_date, to_start_time, to_start_time_id, to_rate_id, to_rate_title, change_rate,
          lease_until < now() AS lease_expired
        FROM booking_changes WHERE id = ${id}::uuid ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
        Effect.map((rows) => rows[0])
      )

    /**
     * Step 3, once: the booking, its mirror row, the emails and `done`, in one transaction. Does
     * nothing when the change is no longer open (finished by someone else).
     */
    const complete = (changeId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const change = yield* loadChange(changeId, true)
        if (change === undefined || (change.state !== "moving" && change.state !== "moved")) return false
        const [b] = yield* sql<{
          id: string
          operator_id: string
          operator_name: string
          operator_timezone: string
          confirmation_code: string
          tour_name: string | null
          participants: number | null
          guest_name: string | null
          guest_email: string | null
          key_name: string | null
        }>`
          UPDATE bookings b SET experience_date = ${change.to_date}::date, start_time = ${change.to_start_time}, updated_at = now()
          FROM operators o
          WHERE b.id = ${change.booking_id}::uuid AND o.id = b.operator_id
          RETURNING b.id, b.operator_id, o.name AS operator_name, o.timezone AS operator_timezone, b.confirmation_code,
            b.tour_name, b.participants, b.guest_name, b.guest_email,
            (SELECT name FROM api_keys WHERE id = ${change.key_id}) AS key_name`
        yield* sql`
          UPDATE manifest_rows SET departure_date = ${change.to_date}::date, start_time = ${change.to_start_time},
            start_time_id = ${change.to_start_time_id},
            rate_id = CASE WHEN ${change.change_rate} THEN ${change.to_rate_id} ELSE rate_id END,
            rate_title = CASE WHEN ${change.change_rate} THEN ${change.to_rate_title} ELSE rate_title END
          WHERE account_id = ${change.account_id}::uuid AND line_id = ${change.line_id}`
        const previous = { date: change.from_date, startTime: change.from_start_time, rateTitle: change.from_rate_title }
        const next = { date: change.to_date, startTime: change.to_start_time, rateTitle: change.to_rate_title }
        const tourName = b!.tour_name && b!.tour_name.trim() ? b!.tour_name : "your tour"
        if (b!.guest_email) {
          yield* outbox.enqueue({
            dedupeKey: outboxKeys.rescheduled(b!.id, change.id, "guest"),
            to: b!.guest_email,
            locale: "en",
            operatorId: b!.operator_id,
            bookingId: b!.id,
            template: "booking_rescheduled_guest",
            data: {
              guestName: b!.guest_name,
              operatorName: b!.operator_name,
              operatorContact: null,
              tourName,
              bookingReference: b!.confirmation_code,
              previous,
              next,
              participants: b!.participants
            }
          })
        }
        const team = yield* outbox.teamAddresses(b!.operator_id)
        if (team.length > 0) {
          yield* outbox.enqueue({
            dedupeKey: outboxKeys.rescheduled(b!.id, change.id, "team"),
            to: team,
            locale: teamLocale(b!.operator_timezone),
            operatorId: b!.operator_id,
            bookingId: b!.id,
            template: "booking_rescheduled_team",
            data: {
              operatorName: b!.operator_name,
              tourName,
              bookingReference: b!.confirmation_code,
              previous,
              next,
              participants: b!.participants,
              guestName: b!.guest_name,
              rescheduledBy: b!.key_name ? `Partner API key "${b!.key_name}"` : "the Partner API"
            }
          })
        }
        yield* sql`
          UPDATE booking_changes SET state = 'done', finished_at = now(), moved_at = coalesce(moved_at, now())
          WHERE id = ${change.id}::uuid`
        return true
      })).pipe(Effect.orDie, Effect.withSpan("Reschedules.complete"))

    const markMoved = (changeId: string) =>
      sql`UPDATE booking_changes SET state = 'moved', moved_at = now() WHERE id = ${changeId}::uuid AND state = 'moving'`.pipe(
        Effect.orDie,
        Effect.asVoid
      )

    const markAbandoned = (changeId: string, reason: string) =>
      sql`
        UPDATE booking_changes SET state = 'abandoned', finished_at = now(), last_error = ${reason.slice(0, 1000)}
        WHERE id = ${changeId}::uuid AND state IN ('moving', 'moved')`.pipe(Effect.orDie, Effect.asVoid)

    /**
     * Finishes one open change left by a crash: `moved` is completed; `moving` is completed when
     * the booking system shows the line on the target departure, else abandoned. When the booking
     * system does not answer, the change stays for the next run.
     */
    const recoverOne = (change: ChangeRow) =>
      Effect.gen(function*() {
        yield* sql`UPDATE booking_changes SET attempts = attempts + 1 WHERE id = ${change.id}::uuid`.pipe(Effect.orDie)
        if (change.state === "moved") return (yield* complete(change.id)) ? "completed" as const : "pending" as const
        const account = yield* accountOf(change.account_id)
        const lines = yield* bookingSystem.booking(account, change.booking_reference).pipe(Effect.either)
        if (Either.isLeft(lines)) {
          if (lines.left._tag === "BookingSystemRejected" && lines.left.reason === "not_found") {
            yield* markAbandoned(change.id, "the booking system no longer has the booking")
            return "abandoned" as const
          }
          yield* sql`UPDATE booking_changes SET last_error = ${lines.left.detail.slice(0, 1000)} WHERE id = ${change.id}::uuid`
            .pipe(Effect.orDie)
          return "pending" as const
        }
        const line = lines.right.find((l) => l.lineId === change.line_id)
        const target = { date: change.to_date, startTimeId: change.to_start_time_id, rateId: change.change_rate ? change.to_rate_id : null }
        if (line !== undefined && line.status !== "CANCELLED" && isOnTarget(line, target)) {
          yield* markMoved(change.id)
          return (yield* complete(change.id)) ? "completed" as const : "pending" as const
        }
        yield* markAbandoned(change.id, "recovery: the booking system did not move the line")
        return "abandoned" as const
      }).pipe(Effect.withSpan("Reschedules.recoverOne", { attributes: { change: change.id, state: change.state } }))

    /** Every open change whose lease is over (the job). One failing change never stops the others. */
    const recoverStale = () =>
      Effect.gen(function*() {
        const stale = yield* sql<ChangeRow>`
          SELECT id FROM booking_changes WHERE state IN ('moving', 'moved') AND lease_until < now()
          ORDER BY created_at LIMIT 100`.pipe(Effect.orDie)
        const counts = { found: stale.length, completed: 0, abandoned: 0, pending: 0 }
        for (const { id } of stale) {
          const change = yield* loadChange(id, false).pipe(Effect.orDie)
          if (change === undefined || !change.lease_expired || (change.state !== "moving" && change.state !== "moved")) continue
          const outcome = yield* recoverOne(change).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning(`booking change ${id} could not be recovered`, cause), "pending" as const))
          )
          counts[outcome] += 1
        }
        return counts satisfies RecoverySummary
      }).pipe(Effect.withSpan("Reschedules.recoverStale"))

    // ---------------------------------------------------------------------------------------------
    // The write

    const refuse = (detail: string) => new NotPossible({ detail })

    const rejectionDetail = (e: BookingSystemError) =>
      e._tag === "BookingSystemRejected" && e.reason === "no_seats"
        ? "date unavailable: the departure no longer has the seats"
        : `the booking system refused the move (${e.reason}): ${e.detail}`

    const reschedule = (id: string, request: RescheduleRequest, ctx: WriteContext) =>
      Effect.gen(function*() {
        // The booking's changes as they are before anything is read: the claim below (and a no-op
        // answer) holds only if none was made since (src/partner/bookingChanges/claim.ts).
        const seen = yield* seenChanges(sql, id)
        let b = yield* loadBooking(id, ctx.operatorIds)
        yield* ctx.target(b.operator_id)

        // A change of this booking still open: running (409), or a reschedule left by a crash (finish it first).
        if (seen.open !== undefined) {
          if (!seen.open.leaseExpired || seen.open.kind !== "reschedule") return yield* changeRunning()
          const change = yield* loadChange(seen.open.id, false).pipe(Effect.orDie)
          if (change !== undefined) {
            const outcome = yield* recoverOne(change)
            if (outcome === "pending") return yield* unavailable("finishing an earlier change of this booking")
            b = yield* loadBooking(id, ctx.operatorIds)
          }
        }

        const at = yield* now
        const eligible = checkReschedulable(facts(b), at)
        if (Either.isLeft(eligible)) return yield* refuse(eligible.left)
        const account = yield* accountOf(b.account_id!)
        const read = yield* readLine(account, b.provider_reference!, b.product_id!).pipe(
          Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(unavailable("reading the booking")))
        )
        if (Either.isLeft(read)) return yield* refuse(yield* noLine(b.id, read.left))
        const line: BookingLine = read.right

        if (isAlreadyOn(line, request)) {
          // Not an answer read from a state another change has just left.
          yield* unchangedSince(sql, seen)
          const noop: WriteDone<RescheduleResultBody> = {
            body: {
              id: b.id,
              status: apiStatusOf(b.status),
              date: b.experience_date ?? line.date,
              start_time: b.start_time,
              previous_date: null,
              previous_start_time: null,
              already_on_date: true
            },
            noop: true
          }
          return noop
        }

        const departures = yield* bookingSystem.availability(account, { productId: b.product_id!, from: request.date, to: request.date })
          .pipe(
            Effect.catchTag("BookingSystemUnavailable", () => Effect.fail(unavailable("reading availability"))),
            Effect.catchTag("BookingSystemRejected", (e) => Effect.fail(refuse(`date unavailable: ${e.detail}`)))
          )
        const decided = decideMove(line, request, departures, b.timezone, at)
        if (Either.isLeft(decided)) return yield* refuse(decided.left)
        const target = decided.right

        // Step 1: the intent, committed before the booking system is asked (and the daily slot taken).
        yield* ctx.beforeChange
        const change = yield* claimChange(sql, seen, sql<{ id: string }>`
          INSERT INTO booking_changes (
            booking_id, kind, state, key_id, request_id, account_id, booking_reference, line_id,
            from_date, from_start_time, from_start_time_id, from_rate_id, from_rate_title,
            to_date, to_start_time, to_start_time_id, to_rate_id, to_rate_title, change_rate, lease_until)
          VALUES (
            ${b.id}::uuid, 'reschedule', 'moving', ${ctx.keyId}, null, ${b.account_id}::uuid, ${b.provider_reference}, ${line.lineId},
            ${b.experience_date ?? line.date}::date, ${b.start_time}, ${line.startTimeId}, ${line.rateId}, ${line.rateTitle},
            ${target.date}::date, ${target.startTime}, ${target.startTimeId}, ${target.rateId}, ${target.rateTitle},
            ${target.changeRate}, now() + make_interval(secs => ${leaseSeconds}))
          ON CONFLICT DO NOTHING
          RETURNING id`)

        // Step 2: the booking system.
        const moved = yield* bookingSystem.move(account, {
          bookingReference: b.provider_reference!,
          lineId: line.lineId,
          date: target.date,
          startTimeId: target.startTimeId,
          rateId: target.changeRate ? target.rateId : null
        }).pipe(Effect.either)
        if (Either.isLeft(moved)) {
          const error = moved.left
          if (error._tag === "BookingSystemRejected") {
            yield* markAbandoned(change.id, rejectionDetail(error))
            return yield* refuse(rejectionDetail(error))
          }
          // No answer: the move may or may not have happened. Ask once.
          const check = yield* bookingSystem.booking(account, b.provider_reference!).pipe(Effect.either)
          if (Either.isLeft(check)) {
            // Unknown: the change stays `moving`; the job (or a retry after the lease) settles it.
            return yield* unavailable("moving the booking")
          }
          const now_ = check.right.find((l) => l.lineId === line.lineId)
          const checkTarget = { date: target.date, startTimeId: target.startTimeId, rateId: target.changeRate ? target.rateId : null }
          if (now_ === undefined || !isOnTarget(now_, checkTarget)) {
            yield* markAbandoned(change.id, `the booking system did not answer the move: ${error.detail}`)
            return yield* unavailable("moving the booking")
          }
        }
        yield* crash.reached("reschedule.after_move")
        yield* markMoved(change.id)
        yield* crash.reached("reschedule.after_moved")

        // Step 3: the service, the mirror row and the emails, together.
        yield* complete(change.id)
        const done: WriteDone<RescheduleResultBody> = {
          body: {
            id: b.id,
            status: apiStatusOf(b.status),
            date: target.date,
            start_time: target.startTime,
            previous_date: b.experience_date,
            previous_start_time: b.start_time,
            already_on_date: false
          },
          noop: false
        }
        return done
      }).pipe(Effect.withSpan("Reschedules.reschedule"))

    return { options, reschedule, recoverStale, complete } as const
  }),
  dependencies: [BookingSystemAccounts.Default, CrashPoints.Default]
}) {}

