/**
 * One payment link at the provider per balance (step 3 of PaymentLinks.send; issue 11 "one payment
 * link per booking and amount, never for a balance this service collected").
 *
 * An open link for the same amount is sent again (after the provider confirms it is still open).
 * Otherwise a `payment_links` row in state `creating` with a new idempotency reference is committed
 * BEFORE the provider is called, under a per-booking advisory lock (every instance takes it, and so
 * does a cancel closing the booking's links): a new row only when the booking has no live link, so
 * that concurrent requests share one link. A crash or a lost answer after that leaves the row; the
 * next attempt (a retry with the same Idempotency-Key, or any later call for the booking) calls the
 * provider with the same reference and the same request, and the provider answers the first link:
 * never a second one. Links that no longer match what is owed are closed at the provider first.
 *
 * A link the provider says is paid, whenever this looks at one (an open link about to be sent
 * again, or a link that no longer fits and is being closed), is recorded as the guest's payment
 * (`PaidLinkRecorder.record`: a `booking_payments` row, the pay-later balance collected) before the
 * write answers 422. The `payment-link-watch` job does the same for every open link.
 */
import { Clock, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { NotPossible, Unavailable } from "../../domain/errors.js"
import { type PaymentAccount, PaymentProvider, type PaymentProviderError } from "../../ports/PaymentProvider.js"
import { LinkTargetsRepo } from "./LinkTargetsRepo.js"
import { PaidLinkRecorder } from "./PaidLinkRecorder.js"
import { type LinkRow, PaymentLinksRepo } from "./PaymentLinksRepo.js"
import { CANCELLED_DETAIL, cancelReference, linkRequest, type Owed, reusable } from "./rules.js"
import { linkDescription, type Target } from "./target.js"

const PAID_BY_LINK_DETAIL = "nothing is owed: the guest has paid this balance through the payment link"

const PAID_EARLIER_LINK_DETAIL =
  "the guest has just paid an earlier payment link of this booking; nothing was sent. Ask again to send a link for any balance still owed"

const providerDown = (e: PaymentProviderError): Effect.Effect<never, Unavailable> =>
  e._tag === "PaymentProviderUnavailable"
    ? Effect.fail(
      new Unavailable({
        detail: "the payment provider did not answer; no link was sent. Retry with the same Idempotency-Key"
      })
    )
    : Effect.die(e)

export class OneLinkPerBalance extends Effect.Service<OneLinkPerBalance>()("Partner/OneLinkPerBalance", {
  effect: Effect.gen(function*() {
    const links = yield* PaymentLinksRepo
    const targets = yield* LinkTargetsRepo
    const provider = yield* PaymentProvider
    const recorder = yield* PaidLinkRecorder

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
        const refused = yield* provider.cancelPaymentLink(at, { linkId, idempotencyReference: cancelReference(row) })
          .pipe(
            Effect.as(false),
            Effect.catchTag("PaymentProviderRejected", () => Effect.succeed(true)), // paid, or closed already
            Effect.catchAll(providerDown)
          )
        if (refused) {
          const status = yield* provider.paymentLinkStatus(at, linkId).pipe(Effect.catchAll(providerDown))
          if (status.state === "paid") {
            yield* recorder.record(row, status)
            return yield* new NotPossible({ detail: PAID_EARLIER_LINK_DETAIL })
          }
        }
        yield* links.close(row.id, "superseded")
      })

    /**
     * The `creating` row to use, under the per-booking lock that the cancel's closing of links takes
     * too, so that requests on every instance agree: an existing `creating` row that fits, or a new
     * one only when the booking has no live link at all. Any other live link (one that became open
     * since this request looked, or one that does not fit and is to be retired): none, look again.
     * A booking whose cancel has begun gets no new link.
     */
    const creatingRow = (target: Target, owed: Owed, account: PaymentAccount) =>
      links.withTransaction(Effect.gen(function*() {
        yield* links.lockTarget(target.key)
        if (target.bookingId !== null && (yield* targets.cancelling(target.bookingId))) {
          return yield* new NotPossible({ detail: CANCELLED_DETAIL })
        }
        const live = yield* links.liveLinks(target.key)
        const existing = live.find((r) => r.state === "creating")
        if (existing !== undefined) {
          const fits = existing.amount_minor === owed.amountMinor && existing.currency.trim() === owed.currency &&
            existing.merchant_id === account.merchantId
          if (!fits) return Option.none()
          // Someone is finishing it now: the job's grace period starts again.
          yield* links.touch(existing.id)
          return Option.some(existing)
        }
        if (live.length > 0) return Option.none()
        const id = randomUUID()
        return Option.some(
          yield* links.insertCreating({
            id,
            target: target.key,
            bookingId: target.bookingId,
            manifestRowId: target.manifestRowId,
            operatorId: target.operatorId,
            kind: owed.kind,
            amountMinor: owed.amountMinor,
            currency: owed.currency,
            merchantId: account.merchantId,
            idempotencyReference: `payment-link:${id}`,
            providerReferenceId: target.bookingReference,
            description: linkDescription(target)
          })
        )
      }))

    /** An open link for what is owed, or a new one made through the provider; the row and its URL. */
    const ensure = Effect.fn("OneLinkPerBalance.ensure")(
      function*(target: Target, owed: Owed, account: PaymentAccount) {
        // A link for this very balance that the guest paid: the balance is paid, whatever our
        // records of the booking say yet (they learn of it later).
        if (yield* links.paidFor(target.key, owed.amountMinor, owed.currency)) {
          return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
        }
        for (let round = 0; round < 4; round++) {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* links.liveLinks(target.key)
          const fits = (r: LinkRow) =>
            r.merchant_id === account.merchantId &&
            reusable(
              { state: r.state, amountMinor: r.amount_minor, currency: r.currency.trim(), expiresAt: r.expires_at },
              owed,
              now
            )
          for (const stale of rows.filter((r) => !fits(r))) yield* retire(stale, account)
          const open = rows.find((r) => fits(r) && r.state === "open")
          if (open !== undefined) {
            const status = yield* provider.paymentLinkStatus(account, open.provider_link_id!).pipe(
              Effect.catchAll(providerDown)
            )
            if (status.state === "open") return { row: open, url: open.url!, created: false }
            if (status.state === "paid") {
              // Paid: recorded as the guest's payment (the job would record it later otherwise).
              yield* recorder.record(open, status)
              return yield* new NotPossible({ detail: PAID_BY_LINK_DETAIL })
            }
            yield* links.close(open.id, status.state)
            continue
          }
          const creating = yield* creatingRow(target, owed, account)
          if (Option.isNone(creating)) continue
          const link = yield* provider.createPaymentLink(account, linkRequest(creating.value)).pipe(
            Effect.catchAll(providerDown)
          )
          yield* links.setProviderLink({ id: creating.value.id, state: "creating" }, link)
          return { row: creating.value, url: link.url, created: true }
        }
        return yield* Effect.dieMessage(`payment link for ${target.key}: links kept changing, gave up`)
      }
    )

    return { ensure } as const
  }),
  dependencies: [PaymentLinksRepo.Default, LinkTargetsRepo.Default, PaidLinkRecorder.Default]
}) {}
