/**
 * The assistant's write tools (issue 16): the REST writes' arguments (`id` and the body's fields),
 * their checks as a preview with a summary a person can read, and their action, run by the two-call
 * protocol (./writeTool.ts, src/assistant/confirmations/).
 */
import { Effect, Schema } from "effect"
import { UuidPath } from "../../http/params.js"
import type { AuthenticatedKey } from "../../partner/auth/KeyAuth.js"
import { Bookings } from "../../partner/bookings/Bookings.js"
import { CancelRequest, CancelResult } from "../../partner/cancels/Api.js"
import { Cancels } from "../../partner/cancels/Cancels.js"
import {
  checkinBodyFields,
  CheckinRequest,
  CheckinResult,
  presentOnlyWhenCheckedIn
} from "../../partner/checkins/Api.js"
import { Checkins } from "../../partner/checkins/Checkins.js"
import { PaymentLinkResult } from "../../partner/paymentLinks/Api.js"
import { PaymentLinks } from "../../partner/paymentLinks/PaymentLinks.js"
import { RescheduleRequest, RescheduleResult } from "../../partner/reschedules/Api.js"
import { Reschedules } from "../../partner/reschedules/Reschedules.js"
import { ConfirmToken, departure, money } from "../confirmations/rules.js"
import { writeTool } from "./writeTool.js"

const operatorIdsOf = (key: AuthenticatedKey) => key.partners.map((p) => p.id)

const confirmToken = Schema.optional(ConfirmToken)

/** "T-123 (Guest Person): Harbour Tour, 2026-12-01 at 10:00 (Europe/Oslo), 2 guests, Alpha Tours" */
const bookingLine = (key: AuthenticatedKey, id: string) =>
  Effect.flatMap(Bookings, (bookings) => bookings.get(id, operatorIdsOf(key), false)).pipe(
    Effect.map((b) =>
      `booking ${b.confirmation_code} (${b.guest.name ?? "no guest name"}): ${b.tour.name ?? "a tour"}, ` +
      `${departure(b.experience_date, b.start_time, b.timezone)}, ${b.participants ?? "?"} guests, ${b.partner.name}`
    )
  )

// -------------------------------------------------------------------------------------------------
// check_in_guests

const CheckInInput = Schema.Struct({
  id: UuidPath.annotations({ description: "The manifest row id (`id` of a row in get_manifest)." }),
  ...checkinBodyFields,
  confirm_token: confirmToken
}).pipe(Schema.filter(presentOnlyWhenCheckedIn))

type CheckInArgs = { readonly id: string } & typeof CheckinRequest.Type

export const checkInGuests = writeTool({
  name: "check_in_guests",
  title: "Check guests in",
  description: "Check a manifest row's guests in (all, or `present` of them), mark it no-show, or clear it, as " +
    "POST /api/v1/manifest/{id}/checkin. Two calls: the first answers a summary and a confirm_token and changes " +
    "nothing; show the summary to the person, then call again with the same arguments and the confirm_token.",
  input: CheckInInput as unknown as Schema.Schema<CheckInArgs & { readonly confirm_token?: string | undefined }>,
  success: CheckinResult,
  scope: "checkins:write",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  action: "checkins",
  transactional: true,
  normalise: (args) =>
    Effect.map(
      Effect.orDie(Schema.decodeUnknown(CheckinRequest)({ status: args.status, present: args.present })),
      (change) => ({ id: args.id.toLowerCase(), ...change })
    ),
  preview: (args, key) =>
    Effect.gen(function*() {
      const checkins = yield* Checkins
      const { id: _, ...change } = args
      const { noop, row } = yield* checkins.preview(args.id, change, operatorIdsOf(key))
      const who =
        `${row.guest_name ?? "the guests"} (${row.participants} guests${
          row.reference ? `, booking ${row.reference}` : ""
        }) on ${row.product_title ?? "a tour"}, ${departure(row.departure_date, row.start_time, row.timezone)}, ` +
        row.operator_name
      const what = change.status === "checked_in"
        ? `Check in ${
          change.present === undefined ? "all" : `${change.present} of`
        } ${row.participants} guests: ${who}.`
        : change.status === "no_show"
        ? `Mark as no-show: ${who}.`
        : `Clear the check-in (back to not seen): ${who}.`
      return {
        summary: noop
          ? `${what} The row is already in that state: nothing will change.`
          : `${what} Only the manifest's check-in changes: no money moves, the booking system is not told.`,
        state: {
          status: row.status,
          participants: row.participants,
          check_in: row.checkin_status,
          present: row.present
        },
        noop
      }
    }),
  perform: (args, ctx) =>
    Effect.flatMap(Checkins, (checkins) => {
      const { id, ...change } = args
      return checkins.set(id, change, ctx)
    }),
  text: (r) =>
    `Row ${r.id}: ${r.check_in.status ?? "not seen"}${
      r.check_in.present === null ? "" : ` (${r.check_in.present} present)`
    }.`
})

// -------------------------------------------------------------------------------------------------
// send_balance_payment_link

const PaymentLinkInput = Schema.Struct({
  id: UuidPath.annotations({
    description: "A booking id, or a manifest row id of a booking that exists only in the booking system."
  }),
  confirm_token: confirmToken
})

export const sendBalancePaymentLink = writeTool({
  name: "send_balance_payment_link",
  title: "Email the guest a payment link",
  description: "Email the guest a link to pay the balance owed, as POST /api/v1/bookings/{id}/payment-link (the " +
    "service decides the amount). Two calls: the first answers a summary and a confirm_token and sends nothing; " +
    "call again with the same arguments and the confirm_token once the person agreed.",
  input: PaymentLinkInput,
  success: PaymentLinkResult,
  scope: "payment_links:write",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  action: "payment_links",
  normalise: (args) => Effect.succeed({ id: args.id.toLowerCase() }),
  preview: (args, key) =>
    Effect.gen(function*() {
      const links = yield* PaymentLinks
      const { owed, target } = yield* links.plan(args.id, operatorIdsOf(key))
      const what = owed.kind === "deferred_balance"
        ? "the pay-later balance"
        : "the balance the booking system says is due"
      return {
        summary: `Email ${target.guestName ?? "the guest"} a link to pay ${money(owed.amountMinor, owed.currency)}, ` +
          `${what} of booking ${target.bookingReference}: ${target.tourName}, ` +
          `${departure(target.date, target.startTime, target.timezone)}, ${target.operatorName}. ` +
          "No money moves until the guest pays on the link's page; a link emailed in the last 10 minutes is not " +
          "emailed again.",
        state: { kind: owed.kind, amount_minor: owed.amountMinor, currency: owed.currency },
        noop: false
      }
    }),
  perform: (args, ctx) => Effect.flatMap(PaymentLinks, (links) => links.send(args.id, ctx)),
  text: (r) =>
    `Payment link for ${money(r.amount_minor, r.currency)} (${r.kind}): ${r.url}. ` +
    (r.emailed ? "The guest has it by email." : "The email did not go out.")
})

// -------------------------------------------------------------------------------------------------
// cancel_booking

const CancelInput = Schema.Struct({
  id: UuidPath.annotations({ description: "The booking id." }),
  ...CancelRequest.fields,
  confirm_token: confirmToken
})

export const cancelBooking = writeTool({
  name: "cancel_booking",
  title: "Cancel a booking with a full refund",
  description: "Cancel a booking and refund the guest in full, as POST /api/v1/bookings/{id}/cancel: the seats " +
    "are released, every payment returned, guest and team emailed; cannot be undone. Two calls: the first answers " +
    "a summary and a confirm_token and changes nothing; call again with the same arguments and the confirm_token " +
    "only after the person agreed.",
  input: CancelInput,
  success: CancelResult,
  scope: "bookings.cancel:write",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  action: "cancels",
  slotBeforeChange: true,
  normalise: (args) => Effect.succeed({ id: args.id.toLowerCase(), reason: args.reason }),
  preview: (args, key) =>
    Effect.gen(function*() {
      const cancels = yield* Cancels
      const p = yield* cancels.preview(args.id, operatorIdsOf(key))
      const line = yield* bookingLine(key, args.id)
      const currency = p.booking.currency.trim()
      return {
        summary: p.alreadyCancelled
          ? `Cancel ${line}. It is already cancelled: nothing will change and no money moves.`
          : `Cancel ${line}. ` +
            (p.refundMinor > 0
              ? `The guest gets ${money(p.refundMinor, currency)} back in full. `
              : "Nothing was paid, so nothing is refunded. ") +
            "The seats are released in the booking system, the commission is voided, and the guest and the team " +
            `are emailed. Reason kept on the booking: "${args.reason}". This cannot be undone.`,
        state: {
          status: p.booking.status,
          amount_minor: p.booking.amount_minor,
          refund_minor: p.refundMinor,
          already_cancelled: p.alreadyCancelled
        },
        noop: p.alreadyCancelled
      }
    }),
  perform: (args, ctx) => Effect.flatMap(Cancels, (cancels) => cancels.cancel(args.id, { reason: args.reason }, ctx)),
  text: (r) =>
    r.already_cancelled
      ? `Booking ${r.id} was already cancelled (${r.status}).`
      : `Booking ${r.id} is ${r.status}; refund ${r.refund.outcome}: ${
        money(r.refund.amount_minor, r.refund.currency)
      }.`
})

// -------------------------------------------------------------------------------------------------
// reschedule_booking

const RescheduleInput = Schema.Struct({
  id: UuidPath.annotations({ description: "The booking id." }),
  ...RescheduleRequest.fields,
  confirm_token: confirmToken
})

export const rescheduleBooking = writeTool({
  name: "reschedule_booking",
  title: "Move a booking to another day",
  description: "Move a booking to another departure at the same price, as POST /api/v1/bookings/{id}/reschedule " +
    "(options from get_reschedule_options). Two calls: the first answers a summary and a confirm_token and " +
    "changes nothing; call again with the same arguments and the confirm_token once the person agreed.",
  input: RescheduleInput,
  success: RescheduleResult,
  scope: "bookings.reschedule:write",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  action: "reschedules",
  slotBeforeChange: true,
  normalise: (args) =>
    Effect.succeed({
      id: args.id.toLowerCase(),
      date: args.date,
      ...(args.start_time_id === undefined ? {} : { start_time_id: args.start_time_id }),
      ...(args.rate_id === undefined ? {} : { rate_id: args.rate_id })
    }),
  preview: (args, key) =>
    Effect.gen(function*() {
      const reschedules = yield* Reschedules
      const { id, ...request } = args
      const { booking: b, plan } = yield* reschedules.preview(id, request, operatorIdsOf(key))
      const line = yield* bookingLine(key, id)
      const state = {
        status: b.status,
        experience_date: b.experience_date,
        start_time: b.start_time,
        line: { date: plan.line.date, start_time_id: plan.line.startTimeId, rate_id: plan.line.rateId },
        target: plan._tag === "Move"
          ? { date: plan.target.date, start_time_id: plan.target.startTimeId, rate_id: plan.target.rateId }
          : null
      }
      if (plan._tag === "AlreadyOn") {
        return {
          summary: `Move ${line} to ${request.date}. It is already on that departure: nothing will change.`,
          state,
          noop: true
        }
      }
      const t = plan.target
      return {
        summary: `Move ${line} to ${departure(t.date, t.startTime, b.timezone)}` +
          `${t.changeRate && t.rateTitle ? ` at the rate "${t.rateTitle}"` : ""}. The price stays the same: no money ` +
          "moves. The booking system is updated and the guest and the team are emailed.",
        state,
        noop: false
      }
    }),
  perform: (args, ctx) =>
    Effect.flatMap(Reschedules, (reschedules) => {
      const { id, ...request } = args
      return reschedules.reschedule(id, request, ctx)
    }),
  text: (r) =>
    r.already_on_date
      ? `Booking ${r.id} is already on ${r.date}.`
      : `Booking ${r.id} moved from ${r.previous_date ?? "?"} ${r.previous_start_time ?? ""} to ${r.date} ` +
        `${r.start_time ?? ""}.`
})
