/**
 * The OpenAPI examples of the five finance reads, one story told the same way in every document
 * (docs only: nothing here is read at run time). Fjord Explorer AS and Arctic Whale Safari AS share
 * one payout account (legal entity Fjord Explorer AS). Booking FJX-7K2M9Q (Fjord Safari, 14 October
 * 2026, NOK 1 200.00, 15 % commission) was a pay-later booking: NOK 300.00 paid at booking on
 * 2 October, the NOK 900.00 balance collected on 7 October. The card holder disputed the balance:
 * the payout of 5 November lost it and a NOK 150.00 fee. October's statement has its sale (and
 * a booking sold and cancelled the same month); invoice INV-000042 bills its commission
 * (NOK 180.00 + 25 % VAT). Amounts are NOK minor units and add up as the field descriptions say.
 */

export const EXAMPLE_PARTNER = { id: "0b7c4f8e-1d1a-4a59-9a43-6c2f0f3b2a11", name: "Fjord Explorer AS" }
export const EXAMPLE_OTHER_PARTNER = { id: "5d1e2c3b-7a8f-4e6d-9c0b-1a2b3c4d5e6f", name: "Arctic Whale Safari AS" }
/** The operators paid through the one payout account (legal entity Fjord Explorer AS). */
export const EXAMPLE_ACCOUNT_PARTNERS = [EXAMPLE_PARTNER, EXAMPLE_OTHER_PARTNER]

export const EXAMPLE_TOUR = "Fjord Safari"
export const EXAMPLE_BOOKING = {
  id: "3fa85f64-5717-4562-b3fc-2c963f66afa6",
  confirmation_code: "FJX-7K2M9Q",
  experience_date: "2026-10-14",
  status: "CONFIRMED" as const
}
/** FJX-7K2M9Q's price, commission (15 %), deposit paid at booking and balance charged later. */
export const EXAMPLE_PRICE_MINOR = 120000
export const EXAMPLE_COMMISSION_RATE = 15
export const EXAMPLE_COMMISSION_MINOR = 18000
export const EXAMPLE_DEPOSIT_MINOR = 30000
export const EXAMPLE_BALANCE_MINOR = 90000

/** A second pay-later booking whose balance charge failed and is tried again. */
export const EXAMPLE_LATER_BOOKING = {
  id: "3e9a1f0c-5b2d-4c8e-a7f6-1d2e3f4a5b6c",
  confirmation_code: "FJX-4R6N2D",
  experience_date: "2026-12-03",
  status: "CONFIRMED" as const
}

export const EXAMPLE_CHARGEBACK_FEE_MINOR = 15000

/** A `next_cursor` as the service issues them (opaque: pass it back as `cursor`). */
export const EXAMPLE_CURSOR =
  "MTc5MzQzNzIwMDAwMDAwMC45YjJlNGMxYTdkM2Y0ZThhYjZjNWQ0ZTNmMmExYjBjOS40ZjdhMWM5ZTJi.gqgV-MF6xE7hRlSTfALgGeuHlMjlh8fB7G8S5uIHWcg"

export const EXAMPLE_INVOICE_ID = "9b2e4c1a-7d3f-4e8a-b6c5-d4e3f2a1b0c9"
export const EXAMPLE_CORRECTED_INVOICE = { id: "2c4e6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d", number: "INV-000041" }
/** The file links of INV-000042 as listed at 09:00 UTC on 26 November 2026 (they expire 15 minutes later). */
export const EXAMPLE_FILES = {
  pdf_url: `https://partners.example.com/api/v1/finance/invoice-files/${EXAMPLE_INVOICE_ID}.pdf?exp=1795684500` +
    "&sig=54666edcfe92f17b2a7180c9294f0b690631814e77052bac137249052b2f4b64",
  csv_url: `https://partners.example.com/api/v1/finance/invoice-files/${EXAMPLE_INVOICE_ID}.csv?exp=1795684500` +
    "&sig=fbe89f6386b0ccf3ec663b001d38c84b7b670b54b8dd3bb14455f38871e0e70c",
  expires_at: "2026-11-26T09:15:00.000Z"
}
