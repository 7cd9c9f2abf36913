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
 * 3. One link at the provider for what is owed (OneLinkPerBalance.ensure): an open one sent again,
 *    or one made once under an idempotency reference committed before the provider is called, so
 *    that a crash, a lost answer or concurrent requests never make a second one.
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
 * The `payment-link-watch` job takes over `creating` rows nobody finished
 * (src/partner/paymentLinks/LinkStatusChecks.ts): such a row becomes `closing`, which this write
 * never reuses, and step 4 emails only a row that is still `creating` or `open`.
 */
import { Clock, Effect, Either, Option } from "effect"
import { createHash } from "node:crypto"
import { NotPossible, notYours, Unavailable } from "../../domain/errors.js"
import { Outbox } from "../../email/Outbox.js"
import { CrashPoints } from "../../lib/CrashPoints.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { BookingSystem, type BookingSystemError } from "../../ports/BookingSystem.js"
import type { WriteContext, WriteDone } from "../writes/rules.js"
import { guestLinkEmail } from "./linkEmails.js"
import { LinkTargetsRepo } from "./LinkTargetsRepo.js"
import { OneLinkPerBalance } from "./OneLinkPerBalance.js"
import { type LinkRow, PaymentLinksRepo } from "./PaymentLinksRepo.js"
import {
  CANCELLED_DETAIL,
  type Collected,
  decidePaymentLink,
  FIRST_LINK_CHECK_SECONDS,
  LINK_EMAIL_WINDOW_SECONDS,
  type Owed,
  owedAfterCollected,
  owedFromBalance,
  type PaymentLinkKind
} from "./rules.js"
import { bookingTarget, rowTarget, type Target } from "./target.js"

export interface PaymentLinkResult {
  readonly id: string
  readonly kind: PaymentLinkKind
  readonly url: string
  readonly amount_minor: number
  readonly currency: string
  readonly emailed: boolean
}

const LINK_TAKEN_DETAIL =
  "the payment link was closed while it was being sent (it was left unfinished too long); nothing was emailed. Retry with the same Idempotency-Key"

const bookingSystemDown = (e: BookingSystemError): Effect.Effect<never, Unavailable | NotPossible> =>
  e._tag === "BookingSystemUnavailable"
    ? Effect.fail(
      new Unavailable({
        detail:
          "the booking system did not answer with the balance; nothing was sent. Retry with the same Idempotency-Key"
      })
    )
    : e.reason === "not_found"
    ? Effect.fail(new NotPossible({ detail: "the booking system does not know this booking: nothing is owed" }))
    : Effect.die(e)

/** The email's occurrence: this request (API key and Idempotency-Key), never a secret. */
const occurrenceOf = (ctx: WriteContext) =>
  createHash("sha256").update(`${ctx.keyId}\n${ctx.idempotencyKey}`).digest("hex").slice(0, 32)

export class PaymentLinks extends Effect.Service<PaymentLinks>()("Partner/PaymentLinks", {
  effect: Effect.gen(function*() {
    const links = yield* PaymentLinksRepo
    const targets = yield* LinkTargetsRepo
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const outbox = yield* Outbox
    const crash = yield* CrashPoints
    const paymentAccounts = yield* OperatorPaymentAccounts
    const oneLink = yield* OneLinkPerBalance

    /** Step 1: the booking, or the manifest row (a row of a service booking is that booking). */
    const resolve = (id: string, operatorIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const booking = yield* targets.bookingTarget(id, operatorIds)
        if (Option.isSome(booking)) return bookingTarget(booking.value)
        const found = yield* targets.rowTarget(id, operatorIds)
        if (Option.isNone(found)) return yield* notYours("booking or manifest row")
        const row = found.value
        if (row.service_booking_id !== null) {
          const linked = yield* targets.bookingTarget(row.service_booking_id, operatorIds)
          if (Option.isSome(linked)) return bookingTarget(linked.value)
        }
        const first = yield* targets.firstRowOf(row.account_id, row.booking_id)
        return rowTarget(row, Option.getOrElse(first, () => row.id))
      })

    /**
     * Money this service itself collected for the booking, by currency: for a service booking its
     * payments on record (checkout, paid links); for a booking only in the booking system, its paid
     * links and the desk sale that made it, paid and not being returned.
     */
    const collectedByUs = (target: Target) =>
      Effect.map(
        target.bookingId !== null
          ? targets.collectedForBooking(target.bookingId)
          : targets.collectedForRow(target.key, target.manifestRowId),
        (rows) => rows.map((r): Collected => ({ currency: r.currency.trim(), amountMinor: r.amount_minor }))
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
      Effect.flatMap(
        paymentAccounts.forOperator(operatorId),
        Option.match({
          onNone: () =>
            Effect.fail(
              new NotPossible({ detail: "payment links are not set up for this operator (no payment account)" })
            ),
          onSome: Effect.succeed
        })
      )

    /**
     * Step 4: the link is open and the guest's email is queued, together, under the link's row lock.
     * A row the job or a cancel has taken over meanwhile (`closing`, or closed since) is never
     * emailed; nor is a link of a booking whose cancel has begun. A link emailed within the window
     * is not emailed again: this request answers that email's outcome.
     */
    const openAndEmail = (
      target: Target,
      owed: Owed,
      link: { readonly row: LinkRow; readonly url: string },
      ctx: WriteContext
    ) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* links.withTransaction(Effect.gen(function*() {
          const locked = yield* links.lockForEmail(link.row.id, LINK_EMAIL_WINDOW_SECONDS)
          const live = Option.exists(locked, (r) => r.state === "creating" || r.state === "open")
          if (target.bookingId !== null && (yield* targets.cancelling(target.bookingId))) {
            // The cancel closes it at the provider (or the payment-link watch does, being due now).
            if (live) yield* links.markClosing(link.row.id)
            return { _tag: "Cancelled" as const }
          }
          if (!live || Option.isNone(locked)) return { _tag: "Taken" as const }
          yield* links.markOpen(link.row.id, FIRST_LINK_CHECK_SECONDS)
          const recentEmail = locked.value.recent_email
          if (recentEmail !== null) {
            // Read after the lock (a statement of its own): the email another request enqueued just before.
            const recent = yield* links.emailStatus(recentEmail)
            if (Option.exists(recent, (status) => status !== "failed")) {
              return { _tag: "Email" as const, id: recentEmail }
            }
          }
          const enqueued = yield* outbox.enqueue(guestLinkEmail(target, owed, link.url, occurrenceOf(ctx), now))
          if (enqueued.created) yield* links.setEmailed(link.row.id, enqueued.id)
          return { _tag: "Email" as const, id: enqueued.id }
        }))
      })

    /**
     * Steps 1 and 2 and the operator's merchant: every check `send` makes before it changes anything.
     * Alone (`plan` of the service) it changes nothing: the assistant's first call of
     * `send_balance_payment_link` shows who would be sent what.
     */
    const planFor = (
      id: string,
      operatorIds: ReadonlyArray<string>,
      onTarget: (operatorId: string) => Effect.Effect<void> = () => Effect.void
    ) =>
      Effect.gen(function*() {
        const target = yield* resolve(id, operatorIds)
        yield* onTarget(target.operatorId)
        const owed = yield* owedFor(target)
        const account = yield* accountFor(target.operatorId)
        return { target, owed, account }
      })

    const plan = Effect.fn("PaymentLinks.plan")(function*(id: string, operatorIds: ReadonlyArray<string>) {
      const { owed, target } = yield* planFor(id, operatorIds)
      return { target, owed }
    })

    const send = Effect.fn("PaymentLinks.send")(function*(id: string, ctx: WriteContext) {
      const { account, owed, target } = yield* planFor(id, ctx.operatorIds, ctx.target)
      const link = yield* oneLink.ensure(target, owed, account)
      yield* crash.reached("payment_link.after_create")

      const step4 = yield* openAndEmail(target, owed, link, ctx)
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
    })

    return { send, plan } as const
  }),
  dependencies: [
    PaymentLinksRepo.Default,
    LinkTargetsRepo.Default,
    OperatorPaymentAccounts.Default,
    OneLinkPerBalance.Default,
    CrashPoints.Default
  ]
}) {}
