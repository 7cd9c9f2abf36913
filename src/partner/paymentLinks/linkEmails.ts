/**
 * The emails of balance payment links, composed (pure; the services enqueue them in their own
 * transactions; templates in src/email/templates.ts, keys and audiences in docs/email.md):
 * - the guest's link (`balance_payment_link_guest`), once per request: the dedupe key names the
 *   booking (or its manifest row) and the request's occurrence (PaymentLinks.send, step 4);
 * - the operator team's notice that a balance paid after its booking-system booking was cancelled
 *   goes back by itself (`balance_refunded_team`), once per link (PaidLinkRecorder.record).
 */
import { localDayAt } from "../../domain/localDay.js"
import type { EnqueueRequest } from "../../email/Outbox.js"
import { emailLocale, outboxKeys, teamLocale } from "../../email/rules.js"
import type { PaidRowMirror } from "./PaidLinksRepo.js"
import type { LinkRow } from "./PaymentLinksRepo.js"
import type { Owed } from "./rules.js"
import type { Target } from "./target.js"

/** The guest's email with the link to pay what is owed; `occurrence` names the request, `now` dates a link without a day. */
export const guestLinkEmail = (
  target: Target,
  owed: Owed,
  paymentUrl: string,
  occurrence: string,
  now: Date
): EnqueueRequest => ({
  dedupeKey: outboxKeys.paymentLink(target.bookingId ?? target.manifestRowId!, occurrence),
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
    departure: {
      date: target.date ?? localDayAt(target.timezone, now),
      startTime: target.startTime,
      rateTitle: target.rateTitle
    },
    amount: { amountMinor: owed.amountMinor, currency: owed.currency },
    paymentUrl,
    payBy: owed.kind === "deferred_balance" && target.chargeAt !== null
      ? localDayAt(target.timezone, target.chargeAt)
      : null
  }
})

/** The team's notice that a link's payment (`amount`) goes back: its booking was cancelled in the booking system. */
export const balanceRefundedTeamEmail = (
  link: LinkRow,
  row: PaidRowMirror,
  team: ReadonlyArray<string>,
  amount: { readonly amountMinor: number; readonly currency: string }
): EnqueueRequest => ({
  dedupeKey: `payment_link:${link.id}:refunded:team`,
  to: team,
  locale: teamLocale(row.operator_timezone),
  operatorId: row.operator_id,
  bookingId: link.manifest_row_id,
  template: "balance_refunded_team",
  data: {
    operatorName: row.operator_name,
    tourName: row.tour_name && row.tour_name.trim() ? row.tour_name : "your tour",
    bookingReference: row.reference && row.reference.trim() ? row.reference : link.provider_reference_id,
    departure: { date: row.departure_date, startTime: row.start_time },
    guestName: row.guest_name,
    amount: { amountMinor: amount.amountMinor, currency: amount.currency }
  }
})
