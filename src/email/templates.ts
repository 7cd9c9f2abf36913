/**
 * The transactional emails, in English and Norwegian bokmål (pure; no I/O): every template by name,
 * and `renderEmail`.
 *
 * Each template has a Schema for its data; `renderEmail` checks the data, then builds the subject,
 * a plain-text part (always) and an HTML part from one list of blocks (templates/blocks.ts), so that
 * both parts say the same thing and every value passes through one escaping function on its way into
 * HTML. One module per family of templates in templates/: bookingCancelled, bookingRescheduled,
 * balancePaymentLink, balanceRefunded, quickbookSale; the values they take in templates/data.ts, how days and money
 * are written in templates/format.ts, the shared words in templates/words.ts.
 *
 * Values are shown as given: dates are local calendar days (`YYYY-MM-DD`) and times local wall-clock
 * times (`HH:MM`) of the tour's time zone, money is integer minor units with an ISO 4217 code.
 */
import { Either, ParseResult, Schema } from "effect"
import type { Locale } from "./rules.js"
import { BalancePaymentLinkGuest, balancePaymentLinkGuest } from "./templates/balancePaymentLink.js"
import { BalanceRefundedTeam, balanceRefundedTeam } from "./templates/balanceRefunded.js"
import { type Composed, toHtml, toText } from "./templates/blocks.js"
import {
  BookingCancelledGuest,
  bookingCancelledGuest,
  BookingCancelledTeam,
  bookingCancelledTeam
} from "./templates/bookingCancelled.js"
import {
  BookingRescheduledGuest,
  bookingRescheduledGuest,
  BookingRescheduledTeam,
  bookingRescheduledTeam
} from "./templates/bookingRescheduled.js"
import { oneLine } from "./templates/format.js"
import { PayLaterFailedTeam, payLaterFailedTeam } from "./templates/payLaterFailed.js"
import {
  QuickbookSaleConfirmedGuest,
  quickbookSaleConfirmedGuest,
  QuickbookSaleFailedGuest,
  quickbookSaleFailedGuest
} from "./templates/quickbookSale.js"

export { Departure, Money, Refund } from "./templates/data.js"
export { escapeHtml, formatDay, formatDeparture, formatMoney } from "./templates/format.js"
export {
  BalancePaymentLinkGuest,
  BalanceRefundedTeam,
  BookingCancelledGuest,
  BookingCancelledTeam,
  BookingRescheduledGuest,
  BookingRescheduledTeam,
  PayLaterFailedTeam,
  QuickbookSaleConfirmedGuest,
  QuickbookSaleFailedGuest
}

/** Every template, by name. */
export const TEMPLATES = {
  booking_cancelled_guest: BookingCancelledGuest,
  booking_cancelled_team: BookingCancelledTeam,
  booking_rescheduled_guest: BookingRescheduledGuest,
  booking_rescheduled_team: BookingRescheduledTeam,
  balance_payment_link_guest: BalancePaymentLinkGuest,
  quickbook_sale_confirmed_guest: QuickbookSaleConfirmedGuest,
  quickbook_sale_failed_guest: QuickbookSaleFailedGuest,
  balance_refunded_team: BalanceRefundedTeam,
  pay_later_failed_team: PayLaterFailedTeam
} as const

export type TemplateName = keyof typeof TEMPLATES
export const TEMPLATE_NAMES = Object.keys(TEMPLATES) as ReadonlyArray<TemplateName>
export type TemplateData<K extends TemplateName> = (typeof TEMPLATES)[K]["Type"]

/** A template and its data, checked together by the type system. */
export type EmailContent = {
  [K in TemplateName]: { readonly template: K; readonly data: TemplateData<K> }
}[TemplateName]

export interface RenderedEmail {
  readonly subject: string
  readonly text: string
  readonly html: string
}

export class TemplateDataInvalid extends Schema.TaggedError<TemplateDataInvalid>()("TemplateDataInvalid", {
  template: Schema.String,
  detail: Schema.String
}) {}

type Composers = { readonly [K in TemplateName]: (locale: Locale, data: TemplateData<K>) => Composed }

const COMPOSERS: Composers = {
  booking_cancelled_guest: bookingCancelledGuest,
  booking_cancelled_team: bookingCancelledTeam,
  booking_rescheduled_guest: bookingRescheduledGuest,
  booking_rescheduled_team: bookingRescheduledTeam,
  balance_payment_link_guest: balancePaymentLinkGuest,
  quickbook_sale_confirmed_guest: quickbookSaleConfirmedGuest,
  quickbook_sale_failed_guest: quickbookSaleFailedGuest,
  balance_refunded_team: balanceRefundedTeam,
  pay_later_failed_team: payLaterFailedTeam
}

/**
 * Renders a template in a locale after checking its data against the template's schema (a
 * failure is a bug in the caller: the type system already asks for the same fields).
 */
export const renderEmail = (
  locale: Locale,
  content: EmailContent
): Either.Either<RenderedEmail, TemplateDataInvalid> => {
  const schema = TEMPLATES[content.template] as unknown as Schema.Schema<unknown>
  return Schema.decodeUnknownEither(schema)(content.data).pipe(
    Either.mapLeft((e) =>
      new TemplateDataInvalid({ template: content.template, detail: ParseResult.TreeFormatter.formatErrorSync(e) })
    ),
    Either.map((data) => {
      const compose = COMPOSERS[content.template] as (locale: Locale, data: unknown) => Composed
      const composed = compose(locale, data)
      const subject = oneLine(composed.subject)
      return { subject, text: toText(composed.blocks), html: toHtml(locale, subject, composed.blocks) }
    })
  )
}
