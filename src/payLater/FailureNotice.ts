/**
 * Telling the guest and the operator that a pay-later balance will not be charged (the charge is
 * failed for good: a hard decline, SCA required, the deadline, no saved card): the guest is emailed
 * the booking's balance payment link (the payment-link feature's `deferred_balance` link, made once
 * at the provider by OneLinkPerBalance under a reference committed before the call), and the
 * operator's team gets `pay_later_failed_team`. Both emails, the link opened and the charge marked
 * told (`link_emailed_at`) are one transaction; their dedupe keys name the charge, so a run that
 * repeats this after a crash enqueues nothing new. A provider that does not answer leaves the charge
 * to be told at the next run.
 */
import { Clock, Effect, Option } from "effect"
import { localDayAt } from "../domain/localDay.js"
import { Outbox } from "../email/Outbox.js"
import { teamLocale } from "../email/rules.js"
import { guestLinkEmail } from "../partner/paymentLinks/linkEmails.js"
import { LinkTargetsRepo } from "../partner/paymentLinks/LinkTargetsRepo.js"
import { OneLinkPerBalance } from "../partner/paymentLinks/OneLinkPerBalance.js"
import { PaymentLinksRepo } from "../partner/paymentLinks/PaymentLinksRepo.js"
import { FIRST_LINK_CHECK_SECONDS, type Owed } from "../partner/paymentLinks/rules.js"
import { bookingTarget, type Target } from "../partner/paymentLinks/target.js"
import { OperatorPaymentAccounts } from "../payments/OperatorPaymentAccounts.js"
import { type DueCharge, PayLaterChargesRepo } from "./PayLaterChargesRepo.js"

export type NoticeOutcome = "told" | "gone" | "no_link"

export class PayLaterFailureNotice extends Effect.Service<PayLaterFailureNotice>()("PayLater/FailureNotice", {
  effect: Effect.gen(function*() {
    const repo = yield* PayLaterChargesRepo
    const targets = yield* LinkTargetsRepo
    const links = yield* PaymentLinksRepo
    const oneLink = yield* OneLinkPerBalance
    const outbox = yield* Outbox
    const paymentAccounts = yield* OperatorPaymentAccounts

    const teamEmail = (
      charge: DueCharge,
      target: Target,
      message: string,
      team: ReadonlyArray<string>,
      guest: boolean
    ) =>
      outbox.enqueue({
        dedupeKey: `pay_later:${charge.id}:failed:team`,
        to: team,
        locale: teamLocale(target.timezone),
        operatorId: charge.operator_id,
        bookingId: charge.booking_id,
        template: "pay_later_failed_team",
        data: {
          operatorName: target.operatorName,
          tourName: target.tourName.trim() ? target.tourName : "your tour",
          bookingReference: target.bookingReference,
          departure: {
            date: target.date ?? localDayAt(target.timezone, charge.charge_at),
            startTime: target.startTime
          },
          guestName: target.guestName,
          amount: { amountMinor: charge.amount_minor, currency: charge.currency },
          failure: message,
          guestEmailed: guest,
          deadline: localDayAt(target.timezone, charge.final_deadline_at)
        }
      })

    /** Tells both; `message` is why the charge stopped. */
    const tell = Effect.fn("PayLaterFailureNotice.tell")(function*(charge: DueCharge, message: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const found = yield* targets.bookingTarget(charge.booking_id, [charge.operator_id])
      if (Option.isNone(found)) {
        yield* repo.markNoticed({ chargeId: charge.id, now })
        return "gone" as NoticeOutcome
      }
      const target = bookingTarget(found.value)
      const owed: Owed = { kind: "deferred_balance", amountMinor: charge.amount_minor, currency: charge.currency }
      const account = yield* paymentAccounts.forOperator(charge.operator_id)
      // The link, once at the provider (a retry after a crash or a lost answer gets the same one).
      const link = Option.isSome(account) && target.guestEmail !== null
        ? yield* oneLink.ensure(target, owed, account.value).pipe(
          Effect.map(Option.some),
          // Nothing is owed any more (paid through an earlier link, or cancelled): no link to send.
          Effect.catchTag("NotPossible", () => Effect.succeed(Option.none()))
        )
        : Option.none()
      const team = yield* outbox.teamAddresses(charge.operator_id)
      const ids = yield* repo.withTransaction(Effect.gen(function*() {
        const emails: Array<string> = []
        if (Option.isSome(link)) {
          yield* links.markOpen(link.value.row.id, FIRST_LINK_CHECK_SECONDS)
          const guest = yield* outbox.enqueue(
            guestLinkEmail(target, owed, link.value.url, `pay_later_${charge.id}`, now)
          )
          if (guest.created) yield* links.setEmailed(link.value.row.id, guest.id)
          emails.push(guest.id)
        }
        if (team.length > 0) emails.push((yield* teamEmail(charge, target, message, team, Option.isSome(link))).id)
        yield* repo.markNoticed({ chargeId: charge.id, now })
        return emails
      }))
      // Try the emails now; the outbox sender job sends whatever this does not.
      yield* Effect.forEach(ids, (id) => Effect.ignore(outbox.deliverNow(id)), { discard: true })
      return (Option.isSome(link) ? "told" : "no_link") as NoticeOutcome
    })

    return { tell } as const
  }),
  dependencies: [
    PayLaterChargesRepo.Default,
    LinkTargetsRepo.Default,
    PaymentLinksRepo.Default,
    OneLinkPerBalance.Default,
    OperatorPaymentAccounts.Default
  ]
}) {}
