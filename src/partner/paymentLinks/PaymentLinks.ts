/**
 * Balance payment links (POST /api/v1/bookings/{id}/payment-link; docs/api/writes.md, rules in
 * src/partner/paymentLinks/rules.ts). Runs inside `Writes.run` (not transactional: it calls the payment
 * provider and the booking system).
 *
 * Steps, and what a crash between them leaves:
 * 1. Resolve the id: a service booking of the key's operators, else a manifest row of theirs (a
 *    row of a service booking stands for that booking), else 404.
 *    A booking whose cancel has begun (a `cancel` change releasing, released or done) counts as
 *    cancelled. The links of a booking-system booking are kept on its first manifest row, whichever
 *    line the request names.
 * 2. Decide kind and amount; the booking system is asked for `provider_balance` (503 when it does
 *    not answer), less what this service itself collected for the booking (its payments on record,
 *    paid links, the desk sale that made it): the booking system may not know of that money.
 * 3. An open link for the same amount is sent again (after the provider confirms it is still
 *    open). Otherwise a `payment_links` row in state `creating` with a new idempotency reference is
 *    committed BEFORE the provider is called, under a per-booking advisory lock (every instance
 *    takes it, and so does a cancel closing the booking's links): a new row only when the booking
 *    has no live link, so that concurrent requests share one link. A crash or a lost answer after
 *    that leaves the row; the next attempt (a retry with the same Idempotency-Key, or any later call
 *    for the booking) calls the provider with the same reference and the same request, and the
 *    provider answers the first link: never a second one. Links that no longer match what is owed
 *    are closed at the provider first.
 * 4. One transaction, under the link row's lock, marks the row `open` and enqueues the guest's
 *    email, whose dedupe key names the booking and this request (key id + Idempotency-Key): a retry
 *    after a crash here enqueues nothing new. A link emailed within LINK_EMAIL_WINDOW_SECONDS
 *    (`emailed_at`) is not emailed again: the request answers that email's outcome, so concurrent
 *    or repeated calls email the guest once per link and window.
 * 5. After commit the email is tried at once (`Outbox.deliverOrAwait`): by this request, or, when
 *    another request or the sender job is trying it at that moment, that attempt is waited for
 *    until its outcome is recorded (a sender that died is taken over after its lease). `emailed` is
 *    true exactly when the email went out, whichever request sent it: every call of the window
 *    answers the same.
 *
 * Crash points (CRASH_AT): `payment_link.after_create` (the provider made the link, the row not yet
 * open), `payment_link.after_open` (open and the email queued, not yet tried).
 *
 * A link the provider says is paid, whenever this write looks at one (an open link about to be sent
 * again, or a link that no longer fits and is being closed), is recorded as the guest's payment
 * (`PaidLinkRecorder.record`: a `booking_payments` row, the pay-later balance collected) before the write
 * answers 422. The `payment-link-watch` job does the same for every open link, and takes over
 * `creating` rows nobody finished (src/partner/paymentLinks/LinkStatusChecks.ts): such a row becomes `closing`,
 * which this write never reuses, and step 4 emails only a row that is still `creating` or `open`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Either, Option } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { localDayAt } from "../../domain/localDay.js"
import { emailLocale, outboxKeys } from "../../email/rules.js"
import { NotPossible, notYours, Unavailable } from "../../domain/errors.js"
import {
  CANCELLED_DETAIL,
  type Collected,
  decidePaymentLink,
  FIRST_LINK_CHECK_SECONDS,
  LINK_EMAIL_WINDOW_SECONDS,
  type Owed,
  owedAfterCollected,
  owedFromBalance,
  type PaymentLinkKind,
  type PaymentLinkTarget,
  reusable
} from "./rules.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import {
  type PaymentAccount,
  PaymentProvider,
  type PaymentProviderError
} from "../../ports/PaymentProvider.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { toPgArray } from "../bookings/Bookings.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { Outbox } from "../../email/Outbox.js"
import { cancelReference, LINK_COLUMNS, linkRequest, type LinkRow, PaidLinkRecorder } from "./PaidLinkRecorder.js"

export interface PaymentLinkResult {
  readonly id: string
  readonly kind: PaymentLinkKind
  readonly url: string
  readonly amount_minor: number
  readonly currency: string
  readonly emailed: boolean
}

/** What the request addresses, with what the email and the provider need. */
interface Target {
  /** `booking:<id>` or `row:<id>`: where links of one booking are kept. */
  readonly key: string
  readonly bookingId: string | null
  readonly manifestRowId: string | null
  readonly operatorId: string
  readonly operatorName: string
  readonly rule: PaymentLinkTarget
  /** Booking-system account and reference, when the booking system can be asked. */
  readonly accountId: string | null
  readonly reference: string | null
  /** Shown to the guest and sent to the provider as `referenceId`. */
  readonly bookingReference: string
  readonly tourName: string
  readonly date: string | null
  readonly startTime: string | null
  readonly rateTitle: string | null
  readonly timezone: string
  readonly guestName: string | null
  readonly guestEmail: string | null
  readonly chargeAt: Date | null
}

const PAID_BY_LINK_DETAIL = "nothing is owed: the guest has paid this balance through the payment link"

const PAID_EARLIER_LINK_DETAIL =
  "the guest has just paid an earlier payment link of this booking; nothing was sent. Ask again to send a link for any balance still owed"

const LINK_TAKEN_DETAIL =
  "the payment link was closed while it was being sent (it was left unfinished too long); nothing was emailed. Retry with the same Idempotency-Key"

const LISTED = "('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')"

/**
 * A cancel of booking `b` has begun (its seats are being released, or it is done with its refund
 * still being finished while the booking reads CONFIRMED): the booking owes nothing any more.
 */
const CANCELLING = `EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id AND c.kind = 'cancel'
  AND c.state IN ('releasing', 'released', 'done'))`

const providerDown = (e: PaymentProviderError): Effect.Effect<never, Unavailable> =>
  e._tag === "PaymentProviderUnavailable"
    ? Effect.fail(new Unavailable({
      detail: "the payment provider did not answer; no link was sent. Retry with the same Idempotency-Key"
    }))
    : Effect.die(e)

const bookingSystemDown = (e: BookingSystemError): Effect.Effect<never, Unavailable | NotPossible> =>
  e._tag === "BookingSystemUnavailable"
    ? Effect.fail(new Unavailable({
      detail: "the booking system did not answer with the balance; nothing was sent. Retry with the same Idempotency-Key"
    }))
    : e.reason === "not_found"
    ? Effect.fail(new NotPossible({ detail: "the booking system does not know this booking: nothing is owed" }))
    : Effect.die(e)

/** The email's occurrence: this request (API key and Idempotency-Key), never a secret. */
const occurrenceOf = (ctx: WriteContext) =>
  createHash("sha256").update(`${ctx.keyId}\n${ctx.idempotencyKey}`).digest("hex").slice(0, 32)

export class PaymentLinks extends Effect.Service<PaymentLinks>()("PaymentLinks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PaymentProvider
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const paymentAccounts = yield* OperatorPaymentAccounts
    const paidLinkRecorder = yield* PaidLinkRecorder

    const bookingTarget = (id: string, operatorIds: ReadonlyArray<string>) =>
      sql<{
        id: string
        operator_id: string
        operator_name: string
        status: string
        payment_strategy: "pay_now" | "pay_later"
        pay_later_status: string | null
        pay_later_amount_minor: number | null
        pay_later_currency: string | null
        pay_later_charge_at: Date | null
        currency: string
        provider_reference: string | null
        account_id: string | null
        confirmation_code: string
        tour_name: string | null
        experience_date: string | null
        start_time: string | null
        timezone: string
        guest_name: string | null
        guest_email: string | null
      }>`
        SELECT b.id, b.operator_id, o.name AS operator_name,
          CASE WHEN ${sql.literal(CANCELLING)} THEN 'CANCELLED' ELSE b.status END AS status, b.payment_strategy, b.pay_later_status,
          b.pay_later_amount_minor, b.pay_later_currency, b.pay_later_charge_at, b.currency, b.provider_reference,
          o.booking_system_account_id AS account_id, b.confirmation_code, b.tour_name, b.experience_date,
          b.start_time, b.timezone, b.guest_name, b.guest_email
        FROM bookings b JOIN operators o ON o.id = b.operator_id
        WHERE b.id = ${id}::uuid AND b.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
          AND ${sql.literal(`b.status IN ${LISTED}`)}`.pipe(
        Effect.map(([b]): Option.Option<Target> =>
          b === undefined ? Option.none() : Option.some({
            key: `booking:${b.id}`,
            bookingId: b.id,
            manifestRowId: null,
            operatorId: b.operator_id,
            operatorName: b.operator_name,
            rule: {
              source: "service",
              status: b.status,
              paymentStrategy: b.payment_strategy,
              payLaterStatus: b.pay_later_status,
              payLaterAmountMinor: b.pay_later_amount_minor,
              payLaterCurrency: b.pay_later_currency?.trim() ?? null,
              currency: b.currency.trim(),
              inBookingSystem: b.account_id !== null && b.provider_reference !== null
            },
            accountId: b.account_id,
            reference: b.provider_reference,
            bookingReference: b.confirmation_code,
            tourName: b.tour_name ?? "your tour",
            date: b.experience_date,
            startTime: b.start_time,
            rateTitle: null,
            timezone: b.timezone,
            guestName: b.guest_name,
            guestEmail: b.guest_email,
            chargeAt: b.pay_later_charge_at
          })
        )
      )

    const rowTarget = (id: string, operatorIds: ReadonlyArray<string>) =>
      sql<{
        id: string
        operator_id: string
        operator_name: string
        status: string
        service_booking_id: string | null
        account_id: string
        reference: string | null
        booking_id: string
        product_title: string | null
        departure_date: string
        start_time: string | null
        rate_title: string | null
        timezone: string
        guest_name: string | null
        guest_email: string | null
      }>`
        SELECT r.id, r.operator_id, o.name AS operator_name, r.status, r.service_booking_id, r.account_id,
          r.reference, r.booking_id, r.product_title, r.departure_date, r.start_time, r.rate_title, r.timezone,
          r.guest_name, r.guest_email
        FROM manifest_rows r JOIN operators o ON o.id = r.operator_id
        WHERE r.id = ${id}::uuid AND r.operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`.pipe(
        Effect.map(([r]) => r)
      )

    /** Step 1: the booking, or the manifest row (a row of a service booking is that booking). */
    const resolve = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const booking = yield* bookingTarget(id, operatorIds)
        if (Option.isSome(booking)) return booking.value
        const row = yield* rowTarget(id, operatorIds)
        if (row === undefined) return yield* notYours("booking or manifest row")
        if (row.service_booking_id !== null) {
          const linked = yield* bookingTarget(row.service_booking_id, operatorIds)
          if (Option.isSome(linked)) return linked.value
        }
        // The links of a booking-system booking are kept on its first row, whichever of its lines
        // the request names: its balance is the booking's, so one link serves all its rows.
        const [first] = yield* sql<{ id: string }>`
          SELECT id FROM manifest_rows WHERE account_id = ${row.account_id} AND booking_id = ${row.booking_id}
          ORDER BY first_seen_at, id LIMIT 1`
        const keptOn = first?.id ?? row.id
        const reference = row.reference ?? row.booking_id
        return {
          key: `row:${keptOn}`,
          bookingId: null,
          manifestRowId: keptOn,
          operatorId: row.operator_id,
          operatorName: row.operator_name,
          rule: { source: "booking_system", status: row.status },
          accountId: row.account_id,
          reference,
          bookingReference: reference,
          tourName: row.product_title ?? "your tour",
          date: row.departure_date,
          startTime: row.start_time,
          rateTitle: row.rate_title,
          timezone: row.timezone,
          guestName: row.guest_name,
          guestEmail: row.guest_email,
          chargeAt: null
        } satisfies Target
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * Money this service itself collected for the booking, by currency: for a service booking its
     * payments on record (checkout, paid links); for a booking only in the booking system, its paid
     * links and the desk sale that made it (POST /book: the sale's booking in the booking system, or
     * the sale reference it carries as external reference, in the account of the sale's tour), paid
     * and not being returned.
     */
    const collectedByUs = (target: Target) =>
      (target.bookingId !== null
        ? sql<{ currency: string; amount_minor: number }>`
          SELECT currency, sum(amount_minor)::int AS amount_minor FROM booking_payments
          WHERE booking_id = ${target.bookingId}::uuid GROUP BY currency`
        : sql<{ currency: string; amount_minor: number }>`
          SELECT currency, sum(amount_minor)::int AS amount_minor FROM (
            SELECT l.currency, l.amount_minor FROM payment_links l
            WHERE l.target = ${target.key} AND l.state = 'closed' AND l.closed_reason = 'paid'
            UNION ALL
            SELECT p.currency, p.amount_minor
            FROM manifest_rows r
            JOIN quickbook_sales s ON s.booking_id = r.booking_id OR s.reference = r.external_reference
            JOIN tours t ON t.id = s.tour_id
            JOIN operators o ON o.id = t.operator_id AND o.booking_system_account_id = r.account_id
            JOIN quickbook_payments p ON p.sale_reference = s.reference AND p.role = 'sale'
              AND p.state IN ('verified', 'booking', 'confirmed')
            WHERE r.id = ${target.manifestRowId}::uuid
          ) collected GROUP BY currency`).pipe(
          Effect.map((rows) => rows.map((r): Collected => ({ currency: r.currency.trim(), amountMinor: r.amount_minor }))),
          Effect.orDie
        )

    /** Step 2: what is owed. */
    const owedFor = (target: Target) =>
      Effect.gen(function*() {
        const decision = decidePaymentLink(target.rule)
        if (Either.isLeft(decision)) return yield* decision.left
        if (decision.right._tag === "Owed") return decision.right.owed
        const account = yield* accounts.byId(target.accountId!).pipe(Effect.orDie)
        const balance = yield* bookingSystem.balance(account.account, target.reference!).pipe(
          Effect.catchAll(bookingSystemDown)
        )
        const owed = owedFromBalance(balance)
        if (Either.isLeft(owed)) return yield* owed.left
        // The booking system's word is not enough: money this service took for the booking is not owed again.
        const left = owedAfterCollected(owed.right, yield* collectedByUs(target))
        if (Either.isLeft(left)) return yield* left.left
        return left.right
      })

    /** The operator's merchant; 422 when the operator has none. */
    const accountFor = (operatorId: string) =>
      Effect.flatMap(paymentAccounts.forOperator(operatorId), Option.match({
        onNone: () => Effect.fail(new NotPossible({ detail: "payment links are not set up for this operator (no payment account)" })),
        onSome: Effect.succeed
      }))

    /** Links a request may send or retire (a `closing` row is the job's). */
    const liveLinks = (targetKey: string) =>
      sql<LinkRow>`
        SELECT ${sql.literal(LINK_COLUMNS)} FROM payment_links
        WHERE target = ${targetKey} AND state IN ('creating', 'open')
        ORDER BY created_at DESC`.pipe(Effect.orDie)

    const close = (id: string, reason: string) =>
      sql`UPDATE payment_links SET state = 'closed', closed_reason = ${reason}, updated_at = now() WHERE id = ${id}`
        .pipe(Effect.orDie)

    /**
     * Closes a link that no longer fits at the provider (finishing its creation first), then here.
     * The provider refusing because the guest has paid it: the payment is recorded and the request
     * answers 422 (what is owed has changed).
     */
    const retire = (row: LinkRow, account: PaymentAccount) =>
      Effect.gen(function*() {
        const at = { ...account, merchantId: row.merchant_id }
        const linkId = row.provider_link_id ??
          (yield* provider.createPaymentLink(at, linkRequest(row)).pipe(Effect.catchAll(providerDown))).linkId
        const refused = yield* provider.cancelPaymentLink(at, { linkId, idempotencyReference: cancelReference(row) }).pipe(
          Effect.as(false),
          Effect.catchTag("PaymentProviderRejected", () => Effect.succeed(true)), // paid, or closed already
          Effect.catchAll(providerDown)
        )
        if (refused) {
          const status = yield* provider.paymentLinkStatus(at, linkId).pipe(Effect.catchAll(providerDown))
          if (status.state === "paid") {
            yield* paidLinkRecorder.record(row, status)
            return yield* new NotPossible({ detail: PAID_EARLIER_LINK_DETAIL })
          }
        }
        yield* close(row.id, "superseded")
      })

    /** Whether a cancel of the booking has begun (read under the caller's locks). */
    const cancelling = (bookingId: string) =>
      Effect.map(
        sql<{ cancelling: boolean }>`
          SELECT (b.status NOT IN ('CONFIRMED', 'RESERVED') OR ${sql.literal(CANCELLING)}) AS cancelling
          FROM bookings b WHERE b.id = ${bookingId}::uuid`,
        (rows) => rows[0]?.cancelling !== false
      )

    /**
     * The `creating` row to use, under the per-booking lock that the cancel's closing of links takes
     * too, so that requests on every instance agree: an existing `creating` row that fits, or a new
     * one only when the booking has no live link at all. Any other live link (one that became open
     * since this request looked, or one that does not fit and is to be retired): none, look again.
     * A booking whose cancel has begun gets no new link.
     */
    const creatingRow = (target: Target, owed: Owed, account: PaymentAccount) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`payment_link:${target.key}`}))`
        if (target.bookingId !== null && (yield* cancelling(target.bookingId))) {
          return yield* new NotPossible({ detail: CANCELLED_DETAIL })
        }
        const live = yield* sql<LinkRow>`
          SELECT ${sql.literal(LINK_COLUMNS)} FROM payment_links WHERE target = ${target.key} AND state IN ('creating', 'open')`
        const existing = live.find((r) => r.state === "creating")
        if (existing !== undefined) {
          const fits = existing.amount_minor === owed.amountMinor && existing.currency.trim() === owed.currency &&
            existing.merchant_id === account.merchantId
          if (!fits) return Option.none()
          // Someone is finishing it now: the job's grace period starts again.
          yield* sql`UPDATE payment_links SET updated_at = now() WHERE id = ${existing.id}::uuid`
          return Option.some(existing)
        }
        if (live.length > 0) return Option.none()
        const id = randomUUID()
        const when = target.date === null ? "" : ` ${target.date}${target.startTime ? ` ${target.startTime}` : ""}`
        const [row] = yield* sql<LinkRow>`
          INSERT INTO payment_links (id, target, booking_id, manifest_row_id, operator_id, kind, amount_minor, currency,
            merchant_id, idempotency_reference, provider_reference_id, description, state)
          VALUES (${id}, ${target.key}, ${target.bookingId}, ${target.manifestRowId}, ${target.operatorId}, ${owed.kind},
            ${owed.amountMinor}, ${owed.currency}, ${account.merchantId}, ${`payment-link:${id}`},
            ${target.bookingReference}, ${`Balance: ${target.tourName}${when}`.slice(0, 200)}, 'creating')
          RETURNING ${sql.literal(LINK_COLUMNS)}`
        return Option.some(row!)
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Step 3: an open link for what is owed, or a new one made through the provider. */
    const ensureLink = (target: Target, owed: Owed, account: PaymentAccount) =>
      Effect.gen(function*() {
        // A link for this very balance that the guest paid: the balance is paid, whatever our
        // records of the booking say yet (they learn of it later).
        const [paid] = yield* sql<{ id: string }>`
          SELECT id FROM payment_links
          WHERE target = ${target.key} AND state = 'closed' AND closed_reason = 'paid'
            AND amount_minor = ${owed.amountMinor} AND currency = ${owed.currency}
          LIMIT 1`.pipe(Effect.orDie)
        if (paid !== undefined) return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
        for (let round = 0; round < 4; round++) {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* liveLinks(target.key)
          const fits = (r: LinkRow) =>
            r.merchant_id === account.merchantId &&
            reusable({ state: r.state, amountMinor: r.amount_minor, currency: r.currency.trim(), expiresAt: r.expires_at }, owed, now)
          for (const stale of rows.filter((r) => !fits(r))) yield* retire(stale, account)
          const open = rows.find((r) => fits(r) && r.state === "open")
          if (open !== undefined) {
            const status = yield* provider.paymentLinkStatus(account, open.provider_link_id!).pipe(
              Effect.catchAll(providerDown)
            )
            if (status.state === "open") return { row: open, url: open.url!, created: false }
            if (status.state === "paid") {
              // Paid: recorded as the guest's payment (the job would record it later otherwise).
              yield* paidLinkRecorder.record(open, status)
              return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
            }
            yield* close(open.id, status.state)
            continue
          }
          const creating = yield* creatingRow(target, owed, account)
          if (Option.isNone(creating)) continue
          const link = yield* provider.createPaymentLink(account, linkRequest(creating.value)).pipe(
            Effect.catchAll(providerDown)
          )
          yield* sql`
            UPDATE payment_links SET provider_link_id = ${link.linkId}, url = ${link.url}, expires_at = ${link.expiresAt},
              updated_at = now()
            WHERE id = ${creating.value.id} AND state = 'creating'`.pipe(Effect.orDie)
          return { row: creating.value, url: link.url, created: true }
        }
        return yield* Effect.dieMessage(`payment link for ${target.key}: links kept changing, gave up`)
      })

    const send = (id: string, ctx: WriteContext) =>
      Effect.gen(function*() {
        const target = yield* resolve(id, ctx.operatorIds)
        yield* ctx.target(target.operatorId)
        const owed = yield* owedFor(target)
        const account = yield* accountFor(target.operatorId)
        const link = yield* ensureLink(target, owed, account)
        yield* crash.reached("payment_link.after_create")

        // Step 4: the link is open and the guest's email is queued, together, under the link's row lock.
        // A row the job or a cancel has taken over meanwhile (`closing`, or closed since) is never
        // emailed; nor is a link of a booking whose cancel has begun. A link emailed within the window
        // is not emailed again: this request answers that email's outcome.
        const step4 = yield* sql.withTransaction(Effect.gen(function*() {
          const [row] = yield* sql<{ state: string; recent_email: string | null }>`
            SELECT state,
              CASE WHEN emailed_at > now() - make_interval(secs => ${LINK_EMAIL_WINDOW_SECONDS}) THEN email_outbox_id END AS recent_email
            FROM payment_links WHERE id = ${link.row.id} FOR UPDATE`
          const live = row?.state === "creating" || row?.state === "open"
          if (target.bookingId !== null && (yield* cancelling(target.bookingId))) {
            // The cancel closes it at the provider (or the payment-link watch does, being due now).
            if (live) {
              yield* sql`
                UPDATE payment_links SET state = 'closing', next_check_at = now(), updated_at = now()
                WHERE id = ${link.row.id}`
            }
            return { _tag: "Cancelled" as const }
          }
          if (!live) return { _tag: "Taken" as const }
          yield* sql`
            UPDATE payment_links SET state = 'open', updated_at = now(),
              next_check_at = now() + make_interval(secs => ${FIRST_LINK_CHECK_SECONDS})
            WHERE id = ${link.row.id} AND state = 'creating'`
          if (row!.recent_email !== null) {
            // Read after the lock (a statement of its own): the email another request enqueued just before.
            const [recent] = yield* sql<{ status: string }>`SELECT status FROM email_outbox WHERE id = ${row!.recent_email}`
            if (recent !== undefined && recent.status !== "failed") return { _tag: "Email" as const, id: row!.recent_email }
          }
          const enqueued = yield* outbox.enqueue({
            dedupeKey: outboxKeys.paymentLink(target.bookingId ?? target.manifestRowId!, occurrenceOf(ctx)),
            to: target.guestEmail === null ? [] : [target.guestEmail],
            locale: emailLocale(null),
            operatorId: target.operatorId,
            bookingId: target.bookingId ?? target.manifestRowId,
            template: "balance_payment_link_guest",
            data: {
              guestName: target.guestName,
              operatorName: target.operatorName,
              operatorContact: null,
              tourName: target.tourName,
              bookingReference: target.bookingReference,
              departure: { date: target.date ?? localDayAt(target.timezone, new Date()), startTime: target.startTime, rateTitle: target.rateTitle },
              amount: { amountMinor: owed.amountMinor, currency: owed.currency },
              paymentUrl: link.url,
              payBy: owed.kind === "deferred_balance" && target.chargeAt !== null
                ? localDayAt(target.timezone, target.chargeAt)
                : null
            }
          })
          if (enqueued.created) {
            yield* sql`UPDATE payment_links SET email_outbox_id = ${enqueued.id}, emailed_at = now() WHERE id = ${link.row.id}`
          }
          return { _tag: "Email" as const, id: enqueued.id }
        })).pipe(Effect.catchTag("SqlError", Effect.die))
        if (step4._tag === "Taken") return yield* new Unavailable({ detail: LINK_TAKEN_DETAIL })
        if (step4._tag === "Cancelled") return yield* new NotPossible({ detail: CANCELLED_DETAIL })

        yield* crash.reached("payment_link.after_open")

        // Step 5: try the email now, or learn how the attempt another request (or the sender job)
        // is making at it goes: `emailed` is that attempt's outcome, whichever request made it.
        const status = yield* outbox.deliverOrAwait(step4.id)
        return {
          body: {
            id: id.toLowerCase(),
            kind: owed.kind,
            url: link.url,
            amount_minor: owed.amountMinor,
            currency: owed.currency,
            emailed: status === "sent"
          },
          noop: false
        } satisfies WriteDone<PaymentLinkResult>
      }).pipe(Effect.withSpan("PaymentLinks.send"))

    return { send } as const
  }),
  dependencies: [OperatorPaymentAccounts.Default, PaidLinkRecorder.Default, CrashPoints.Default]
}) {}
