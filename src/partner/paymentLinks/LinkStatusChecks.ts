/**
 * Noticing when a guest pays a balance payment link (the `payment-link-watch` job,
 * src/jobs/paymentLinkWatch.ts; docs/api/writes.md "When the guest pays"). The provider tells us
 * nothing by itself: each run asks it (`paymentLinkStatus`) about the links that are due.
 *
 * 1. `creating` rows untouched for CREATING_GRACE_SECONDS (the provider call never confirmed and
 *    no request came back for them) become `closing`: from then on no request reuses them, and a
 *    request that was still sending one finds it taken and emails nothing (PaymentLinks step 4).
 * 2. Due `open` and `closing` rows are claimed by pushing their next check out, then each is looked
 *    at once (one failing link never stops the others):
 *    - `open`: paid → recorded (PaidLinkRecorder.record: booking_payments row, pay-later balance collected,
 *      link closed; paid for a booking whose cancel completed: refunded at once, Cancels.refundLate;
 *      paid for a booking only in the booking system that is cancelled, in the mirror or, asked
 *      now, in the booking system: its refund row is written with the record and sent in step 3);
 *      expired or cancelled at the provider → closed; still open while the booking
 *      no longer owes it (cancelled, or its pay-later balance collected or cancelled another way) →
 *      cancelled at the provider and closed (`not_owed`), so a guest cannot pay it any more; still
 *      open → asked again later (nextLinkCheck: 5 minutes doubling to an hour, and just after it
 *      expires). A provider that does not answer leaves the link as it is, for a later run.
 *    - `closing`: see `settleClosing`.
 * 3. Refunds of such late payments that are due are sent (LinkRefunds.sendDue): the ones just
 *    written, and those still open from earlier runs (no answer, settling), with their own reference.
 */
import { Clock, Effect, Either, Option, Random } from "effect"
import { annotateSpan } from "../../observability/spanFn.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import {
  type PaymentAccount,
  type PaymentLinkStatus,
  PaymentProvider,
  type PaymentProviderError
} from "../../ports/PaymentProvider.js"
import { Cancels } from "../cancels/Cancels.js"
import { LinkRefunds, type LinkRefundSummary } from "./LinkRefunds.js"
import { LinkTargetsRepo } from "./LinkTargetsRepo.js"
import { PaidLinkRecorder } from "./PaidLinkRecorder.js"
import { type LinkRow, PaymentLinksRepo } from "./PaymentLinksRepo.js"
import { cancelReference, linkRequest, nextLinkCheck, provesNoLink } from "./rules.js"

/**
 * How long a `creating` row is left to the request that made it (and to its retries with the same
 * Idempotency-Key) before the job takes it over. A request holds a row for seconds; a retry after a
 * 503 usually comes within minutes. It must stay well inside the time the provider remembers an
 * idempotency reference (undocumented for Surfboard, see docs/payment-provider.md; the sandbox keeps
 * them for ever), so that sending the reference again finds the first link.
 */
export const CREATING_GRACE_SECONDS = 15 * 60

/** Rows one run looks at, at most (the rest are due on the next run). */
const BATCH = 200

/** How long a claimed row is left alone if the run dies before recording what it saw. */
const CLAIM_SECONDS = 5 * 60

export interface WatchSummary {
  /** `creating` rows past the grace period, taken over (now `closing`). */
  readonly taken_over: number
  readonly checked: number
  /** Recorded as paid. */
  readonly paid: number
  /** Of those, paid after the booking's cancel began: refunded automatically (also counted in `paid`). */
  readonly refunded: number
  /** Closed without a payment: expired, cancelled, no longer owed, or an unfinished link closed. */
  readonly closed: number
  readonly still_open: number
  /** The provider did not answer (or the operator has no payment account): left for a later run. */
  readonly unanswered: number
  /** Refunds of payments for cancelled bookings only in the booking system, sent this run (new ones and retries). */
  readonly link_refunds: LinkRefundSummary
}

type Seen = "paid" | "refunded" | "closed" | "still_open" | "unanswered"

const detailOf = (e: PaymentProviderError) => `${e.operation}: ${e.reason}: ${e.detail}`.slice(0, 1000)

export class LinkStatusChecks extends Effect.Service<LinkStatusChecks>()("Partner/LinkStatusChecks", {
  effect: Effect.gen(function*() {
    const links = yield* PaymentLinksRepo
    const targets = yield* LinkTargetsRepo
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts
    const recorder = yield* PaidLinkRecorder
    const cancels = yield* Cancels
    const linkRefunds = yield* LinkRefunds
    const bookingSystem = yield* BookingSystem
    const bookingSystemAccounts = yield* BookingSystemAccounts

    /** The operator's credentials, for the merchant the link was made at. */
    const accountFor = (row: LinkRow) =>
      Effect.map(
        paymentAccounts.forOperator(row.operator_id),
        Option.map((a): PaymentAccount => ({ ...a, merchantId: row.merchant_id }))
      )

    /** Nothing learnt: ask again after the backoff. */
    const later = (row: LinkRow, error: string | null) =>
      Effect.gen(function*() {
        const next = nextLinkCheck(
          row.checks + 1,
          row.expires_at,
          new Date(yield* Clock.currentTimeMillis),
          yield* Random.next
        )
        yield* links.checkLater(row, error, next)
      })

    const unanswered = (row: LinkRow, error: string) => Effect.as(later(row, error), "unanswered" as const)

    const close = (row: LinkRow, reason: string, linkId: string | null = null) =>
      Effect.as(links.closeChecked(row, reason, linkId), "closed" as const)

    /**
     * Records the payment; one that arrived for a booking whose cancel completed is refunded at once
     * (its refund row was written with the record; the booking-change recovery job would send it
     * otherwise).
     */
    const recordPaid = (row: LinkRow, status: PaymentLinkStatus): Effect.Effect<Seen> =>
      Effect.gen(function*() {
        let bookingSystemCancelled = false
        if (row.booking_id === null && row.manifest_row_id !== null && !(yield* targets.owesNothing(row))) {
          // The mirror still shows the booking live; it is refreshed only every few hours, so the
          // booking system says whether it was cancelled since (a payment recorded as the balance
          // would never be looked at again).
          const asked = yield* cancelledInBookingSystem(row, row.manifest_row_id)
          if (Either.isLeft(asked)) return yield* unanswered(row, asked.left)
          bookingSystemCancelled = asked.right
        }
        const recorded = yield* recorder.record(row, status, { bookingSystemCancelled })
        if (recorded.refund?.changeState === "done") yield* cancels.refundLate(recorded.refund.changeId)
        return recorded.refund === null && !recorded.linkRefund ? "paid" as const : "refunded" as const
      })

    /**
     * Whether the booking system says the booking of a manifest row's link is cancelled (every line
     * of it). Left: it did not answer (ask again on a later run). A booking it refuses to show is
     * judged by the mirror (logged).
     */
    const cancelledInBookingSystem = (row: LinkRow, manifestRowId: string) =>
      Effect.gen(function*() {
        const found = yield* targets.bookingOfRow(manifestRowId)
        if (Option.isNone(found)) return Either.right(false)
        const r = found.value
        const { account } = yield* Effect.orDie(bookingSystemAccounts.byId(r.account_id))
        const lines = yield* Effect.either(bookingSystem.booking(account, r.reference ?? r.booking_id))
        if (Either.isRight(lines)) {
          return Either.right(lines.right.length > 0 && lines.right.every((l) => l.status === "CANCELLED"))
        }
        if (lines.left._tag === "BookingSystemUnavailable") {
          return Either.left(
            `the booking system did not answer whether the booking is cancelled: ${lines.left.detail}`.slice(0, 1000)
          )
        }
        yield* Effect.logWarning(
          `payment link ${row.id}: the booking system refused to show booking ${r.reference ?? r.booking_id} ` +
            `(${lines.left.reason}); judged by the mirror`
        )
        return Either.right(false)
      })
    /**
     * Cancels an unpaid link at the provider and closes it here. The provider refusing because the
     * guest paid in the meantime: that payment is recorded instead.
     */
    const cancelAtProvider = (row: LinkRow, account: PaymentAccount, linkId: string, reason: string) =>
      Effect.gen(function*() {
        const cancelled = yield* Effect.either(
          provider.cancelPaymentLink(account, { linkId, idempotencyReference: cancelReference(row) })
        )
        if (Either.isRight(cancelled)) return yield* close(row, reason, linkId)
        if (cancelled.left._tag === "PaymentProviderUnavailable") {
          return yield* unanswered(row, detailOf(cancelled.left))
        }
        const status = yield* Effect.either(provider.paymentLinkStatus(account, linkId))
        if (Either.isLeft(status)) return yield* unanswered(row, detailOf(status.left))
        if (status.right.state === "paid") return yield* recordPaid(row, status.right)
        if (status.right.state !== "open") return yield* close(row, status.right.state, linkId)
        return yield* unanswered(row, detailOf(cancelled.left))
      })

    const checkOpen = (row: LinkRow, account: PaymentAccount): Effect.Effect<Seen> =>
      Effect.gen(function*() {
        const status = yield* Effect.either(provider.paymentLinkStatus(account, row.provider_link_id!))
        if (Either.isLeft(status)) return yield* unanswered(row, detailOf(status.left))
        switch (status.right.state) {
          case "paid":
            return yield* recordPaid(row, status.right)
          case "expired":
          case "cancelled":
            return yield* close(row, status.right.state)
          case "open": {
            if (yield* targets.owesNothing(row)) {
              return yield* cancelAtProvider(row, account, row.provider_link_id!, "not_owed")
            }
            yield* later(row, null)
            return "still_open"
          }
        }
      })

    /**
     * A `creating` row nobody finished. Its link may or may not exist at the provider, and without
     * the provider's id it can be neither read nor closed. The safe move is the one a retrying
     * request makes: send the same reference with the same request, so the provider answers the
     * link it made (or makes it now, to the same effect); a definite refusal means no link exists.
     * Then read it: paid → recorded; expired or cancelled → closed; open → cancelled at the
     * provider and closed (`abandoned`). It is never turned into an open link: no guest was emailed
     * it, and what the booking owes may have changed since; the next request makes a fresh one.
     * A provider that does not answer leaves the row `closing` for the next run.
     */
    const settleClosing = (row: LinkRow, account: PaymentAccount): Effect.Effect<Seen> =>
      Effect.gen(function*() {
        let linkId = row.provider_link_id
        if (linkId === null) {
          const created = yield* Effect.either(provider.createPaymentLink(account, linkRequest(row)))
          if (Either.isLeft(created)) {
            const e = created.left
            if (provesNoLink(e)) return yield* close(row, "abandoned")
            if (e._tag === "PaymentProviderRejected") {
              yield* Effect.logError(`payment link ${row.id}: the provider holds another request under its reference`)
                .pipe(
                  Effect.annotateLogs({ alert: "payment_link_unsettled", payment_link_id: row.id })
                )
            }
            return yield* unanswered(row, detailOf(e))
          }
          linkId = created.right.linkId
          yield* links.setProviderLink({ id: row.id, state: "closing" }, created.right)
        }
        const status = yield* Effect.either(provider.paymentLinkStatus(account, linkId))
        if (Either.isLeft(status)) return yield* unanswered({ ...row, provider_link_id: linkId }, detailOf(status.left))
        if (status.right.state === "paid") return yield* recordPaid({ ...row, provider_link_id: linkId }, status.right)
        if (status.right.state !== "open") return yield* close(row, status.right.state, linkId)
        return yield* cancelAtProvider(row, account, linkId, "abandoned")
      })

    /** One due link, looked at once; whatever goes wrong is logged and leaves it for a later run. */
    const check = Effect.fn("LinkStatusChecks.check")(
      function*(row: LinkRow) {
        yield* annotateSpan({ link: row.id, state: row.state })
        const account = yield* accountFor(row)
        if (Option.isNone(account)) {
          yield* Effect.logWarning(
            `payment link ${row.id}: operator ${row.operator_id} has no payment account any more`
          )
          return yield* unanswered(row, "the operator has no payment account")
        }
        return row.state === "closing" ? yield* settleClosing(row, account.value) : yield* checkOpen(row, account.value)
      },
      (effect, row): Effect.Effect<Seen> =>
        Effect.catchAllCause(
          effect,
          (cause) =>
            Effect.as(Effect.logWarning(`payment link ${row.id} could not be checked`, cause), "unanswered" as const)
        )
    )

    /** One run of the job. */
    const run = Effect.fn("LinkStatusChecks.run")(function*() {
      const taken = yield* links.takeOverUnfinished(CREATING_GRACE_SECONDS, BATCH)
      const due = yield* links.claimDue(CLAIM_SECONDS, BATCH)
      const seen = yield* Effect.forEach(due, (row) => check(row), { concurrency: 4 })
      const refunds = yield* linkRefunds.sendDue().pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("payment link refunds could not be sent", cause), {
            found: 0,
            completed: 0,
            open: 0,
            failed: 0
          })
        )
      )
      const count = (s: Seen) => seen.filter((x) => x === s).length
      const summary: WatchSummary = {
        taken_over: taken.length,
        checked: due.length,
        paid: count("paid") + count("refunded"),
        refunded: count("refunded"),
        closed: count("closed"),
        still_open: count("still_open"),
        unanswered: count("unanswered"),
        link_refunds: refunds
      }
      yield* annotateSpan({ ...summary, link_refunds: refunds.found })
      return summary
    })

    return { run } as const
  }),
  dependencies: [
    PaymentLinksRepo.Default,
    LinkTargetsRepo.Default,
    OperatorPaymentAccounts.Default,
    PaidLinkRecorder.Default,
    Cancels.Default,
    LinkRefunds.Default,
    BookingSystemAccounts.Default
  ]
}) {}
