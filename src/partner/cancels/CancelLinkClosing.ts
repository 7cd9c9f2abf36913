/**
 * Step 2b of a cancel (src/partner/cancels/Cancels.ts; docs/decisions.md, issue 11 item 7): the
 * booking's balance payment links, closed at the provider after the booking system released the
 * seats and before the refund rows are written (a crash in between is repeated by recovery: every
 * call here uses the link's own references).
 *
 * Every live link of the booking is taken over (`closing`) under the per-booking lock the
 * payment-link write takes, so that no request sends or makes a link from then on. Each is then
 * learnt (a `creating` one, by sending its own reference and request again, as a retrying request
 * would), cancelled at the provider and closed (`booking_cancelled`). Refused because the guest has
 * paid it: the payment is recorded (`PaidLinkRecorder.record`) before the refund rows are written, so it
 * goes back with the cancel's refunds. A provider that does not answer leaves it `closing` and
 * due: the payment-link watch settles it (and a payment that still arrives is refunded).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { transactionAtEdge } from "../../db/repoEdge.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { OperatorPaymentAccounts } from "../../payments/OperatorPaymentAccounts.js"
import { type PaymentAccount, PaymentProvider, type PaymentProviderError } from "../../ports/PaymentProvider.js"
import { PaidLinkRecorder } from "../paymentLinks/PaidLinkRecorder.js"
import { PaymentLinksRepo } from "../paymentLinks/PaymentLinksRepo.js"
import { cancelReference, linkRequest, provesNoLink } from "../paymentLinks/rules.js"
import { bookingTargetKey } from "../paymentLinks/target.js"
import { CancelsRepo, type ClosingLink } from "./CancelsRepo.js"

export class CancelLinkClosing extends Effect.Service<CancelLinkClosing>()("Partner/CancelLinkClosing", {
  effect: Effect.gen(function*() {
    const transaction = transactionAtEdge(yield* SqlClient.SqlClient)
    const provider = yield* PaymentProvider
    const paymentAccounts = yield* OperatorPaymentAccounts
    const paidLinks = yield* PaidLinkRecorder
    const repo = yield* CancelsRepo
    const links = yield* PaymentLinksRepo

    const closed = (row: ClosingLink, reason: string, linkId: string | null) =>
      repo.linkClosed({ id: row.id, reason, linkId })

    const leftClosing = (row: ClosingLink, e: PaymentProviderError) =>
      repo.linkStillClosing({ id: row.id, error: `${e.operation}: ${e.reason}: ${e.detail}` })

    /** One link of the cancelled booking, taken over: learnt if need be, cancelled and closed (see the header). */
    const closeOne = Effect.fn("CancelLinkClosing.closeOne")(
      function*(row: ClosingLink) {
        yield* annotateSpan({ link: row.id, state: row.state })
        const found = yield* paymentAccounts.forOperator(row.operator_id)
        if (Option.isNone(found)) return
        const account: PaymentAccount = { ...found.value, merchantId: row.merchant_id }
        let linkId = row.provider_link_id
        if (linkId === null) {
          const created = yield* Effect.either(provider.createPaymentLink(account, linkRequest(row)))
          if (Either.isLeft(created)) {
            if (provesNoLink(created.left)) return yield* closed(row, "abandoned", null)
            return yield* leftClosing(row, created.left)
          }
          linkId = created.right.linkId
          yield* repo.linkLearnt({ id: row.id, linkId, url: created.right.url, expiresAt: created.right.expiresAt })
        }
        const cancelled = yield* Effect.either(
          provider.cancelPaymentLink(account, { linkId, idempotencyReference: cancelReference(row) })
        )
        if (Either.isRight(cancelled)) return yield* closed(row, "booking_cancelled", linkId)
        if (cancelled.left._tag === "PaymentProviderUnavailable") return yield* leftClosing(row, cancelled.left)
        const status = yield* Effect.either(provider.paymentLinkStatus(account, linkId))
        if (Either.isLeft(status)) return yield* leftClosing(row, status.left)
        if (status.right.state === "paid") {
          yield* paidLinks.record({ ...row, provider_link_id: linkId }, status.right)
          return
        }
        if (status.right.state !== "open") return yield* closed(row, status.right.state, linkId)
        return yield* leftClosing(row, cancelled.left)
      },
      (effect, row) =>
        Effect.catchAllCause(
          effect,
          (cause) =>
            Effect.logWarning(
              `cancel: payment link ${row.id} could not be closed now; the payment-link watch will`,
              cause
            )
        )
    )

    /** Every live link of the booking taken over under the per-booking lock, then each closed at the provider. */
    const close = Effect.fn("CancelLinkClosing.close")(function*(bookingId: string) {
      const rows = yield* transaction(
        Effect.zipRight(links.lockTarget(bookingTargetKey(bookingId)), repo.takeOverLinks(bookingId))
      )
      yield* Effect.forEach(rows, closeOne, { discard: true })
    })

    return { close } as const
  }),
  dependencies: [
    OperatorPaymentAccounts.Default,
    PaidLinkRecorder.Default,
    CancelsRepo.Default,
    PaymentLinksRepo.Default
  ]
}) {}
