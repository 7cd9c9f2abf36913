/**
 * The payment links' emails as composed (src/partner/paymentLinks/linkEmails.ts): keys, addressees,
 * fallbacks, and data that the templates accept (renderEmail checks it against the template's schema).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { renderEmail } from "../../../src/email/templates.js"
import { balanceRefundedTeamEmail, guestLinkEmail } from "../../../src/partner/paymentLinks/linkEmails.js"
import type { PaidRowMirror } from "../../../src/partner/paymentLinks/PaidLinksRepo.js"
import type { LinkRow } from "../../../src/partner/paymentLinks/PaymentLinksRepo.js"
import { bookingTarget, rowTarget } from "../../../src/partner/paymentLinks/target.js"

const booking = bookingTarget({
  id: "5f0c0000-0000-4000-8000-000000000001",
  operator_id: "0a000000-0000-4000-8000-000000000001",
  operator_name: "Fjord Tours",
  status: "CONFIRMED",
  payment_strategy: "pay_later",
  pay_later_status: "upcoming",
  pay_later_amount_minor: 30000,
  pay_later_currency: "NOK",
  pay_later_charge_at: new Date("2026-12-01T10:00:00Z"),
  currency: "NOK",
  provider_reference: null,
  account_id: null,
  confirmation_code: "FT-1234",
  tour_name: "Fjord cruise",
  experience_date: "2026-12-04",
  start_time: "10:00",
  timezone: "Europe/Oslo",
  guest_name: "Kari",
  guest_email: "kari@example.com"
})

const manifestRow = {
  id: "7e000000-0000-4000-8000-000000000002",
  operator_id: "0a000000-0000-4000-8000-000000000001",
  operator_name: "Fjord Tours",
  status: "CONFIRMED",
  service_booking_id: null,
  account_id: "acc-1",
  reference: null,
  booking_id: "BK-77",
  product_title: null,
  departure_date: "2026-12-05",
  start_time: null,
  rate_title: "Adult",
  timezone: "Europe/Oslo",
  guest_name: null,
  guest_email: null
} as const

const renders = (request: ReturnType<typeof guestLinkEmail>) => Either.isRight(renderEmail(request.locale, request))

describe("the guest's payment-link email", () => {
  const now = new Date("2026-11-30T23:30:00Z")

  it("is keyed by the booking and the request, addressed to the guest, with the pay-by day of a pay-later balance", () => {
    const email = guestLinkEmail(
      booking,
      { kind: "deferred_balance", amountMinor: 30000, currency: "NOK" },
      "https://pay/x",
      "occ1",
      now
    )
    expect(email.dedupeKey).toBe("booking:5f0c0000-0000-4000-8000-000000000001:payment_link:occ1:guest")
    expect(email.to).toEqual(["kari@example.com"])
    expect(email.bookingId).toBe(booking.bookingId)
    expect(email.data).toMatchObject({
      paymentUrl: "https://pay/x",
      amount: { amountMinor: 30000, currency: "NOK" },
      departure: { date: "2026-12-04", startTime: "10:00", rateTitle: null },
      payBy: "2026-12-01"
    })
    expect(renders(email)).toBe(true)
  })

  it("a provider balance has no pay-by day", () => {
    const email = guestLinkEmail(
      booking,
      { kind: "provider_balance", amountMinor: 500, currency: "NOK" },
      "https://pay/y",
      "occ2",
      now
    )
    expect(email.data).toMatchObject({ payBy: null })
  })

  it("a booking only in the booking system is keyed by the row its links are kept on; no address, no email to anyone", () => {
    const target = rowTarget(manifestRow, "7e000000-0000-4000-8000-000000000009")
    const email = guestLinkEmail(
      target,
      { kind: "provider_balance", amountMinor: 500, currency: "NOK" },
      "https://pay/z",
      "occ3",
      now
    )
    expect(email.dedupeKey).toBe("booking:7e000000-0000-4000-8000-000000000009:payment_link:occ3:guest")
    expect(email.to).toEqual([])
    expect(email.data).toMatchObject({
      tourName: "your tour",
      bookingReference: "BK-77",
      departure: { date: "2026-12-05", rateTitle: "Adult" }
    })
    expect(renders(email)).toBe(true)
  })

  it("a booking without a day is dated by today in its time zone", () => {
    const undated = { ...booking, date: null }
    const email = guestLinkEmail(
      undated,
      { kind: "provider_balance", amountMinor: 500, currency: "NOK" },
      "https://pay/w",
      "occ4",
      now
    )
    // 23:30 UTC is already the next day in Oslo.
    expect(email.data).toMatchObject({ departure: { date: "2026-12-01" } })
  })
})

describe("the team's notice of a balance refunded by itself", () => {
  const link = {
    id: "11000000-0000-4000-8000-000000000003",
    manifest_row_id: "7e000000-0000-4000-8000-000000000002",
    provider_reference_id: "BK-77"
  } as LinkRow
  const mirror: PaidRowMirror = {
    cancelled: true,
    reference: " ",
    tour_name: null,
    departure_date: "2026-12-05",
    start_time: "09:00",
    guest_name: "Ola",
    operator_id: "0a000000-0000-4000-8000-000000000001",
    operator_name: "Fjord Tours",
    operator_timezone: "Europe/Oslo"
  }

  it("is keyed by the link, goes to the team, falls back to the link's reference and 'your tour'", () => {
    const email = balanceRefundedTeamEmail(link, mirror, ["team@example.com"], { amountMinor: 500, currency: "NOK" })
    expect(email.dedupeKey).toBe("payment_link:11000000-0000-4000-8000-000000000003:refunded:team")
    expect(email.to).toEqual(["team@example.com"])
    expect(email.bookingId).toBe(link.manifest_row_id)
    expect(email.data).toMatchObject({
      tourName: "your tour",
      bookingReference: "BK-77",
      amount: { amountMinor: 500, currency: "NOK" }
    })
    expect(renders(email)).toBe(true)
  })
})
