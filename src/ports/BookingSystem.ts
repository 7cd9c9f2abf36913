/**
 * The one interface through which the service talks to an operator's booking system (Bókun for
 * every operator today; the sandbox speaks the same dialect). One adapter serves many accounts,
 * so every call names the account it acts on.
 *
 * Conventions:
 * - Days are local calendar days `YYYY-MM-DD` of the product's time zone, times are local `HH:MM`.
 * - Money is integer minor units with an ISO 4217 currency.
 * - Ids are the booking system's own, as strings.
 * - `BookingSystemUnavailable` means "did not answer in time, or answered 5xx": the caller may
 *   retry (for writes only with the same idempotency key). `BookingSystemRejected` is a definite
 *   "no" (no seats, unknown booking, ...), never worth retrying as is.
 */
import { Context, Data, Effect, Option, type Redacted, Stream } from "effect"

export type AdapterKind = "bokun"

/** A booking-system account: where it is and how to sign in. Credentials never reach logs. */
export interface BookingSystemAccount {
  readonly id: string
  readonly kind: AdapterKind
  readonly name: string
  readonly baseUrl: string
  readonly accessKey: Redacted.Redacted<string>
  readonly secretKey: Redacted.Redacted<string>
  /**
   * The booking system's id of the sales channel the service books through (in Bókun: the booking
   * channel of the account's API key). Lines sold there get channel class `service`. Optional: when
   * unknown, such lines look like any other reseller channel.
   */
  readonly serviceChannelId?: string | null | undefined
}

export class BookingSystemUnavailable extends Data.TaggedError("BookingSystemUnavailable")<{
  readonly accountId: string
  readonly operation: string
  /** timeout, http_5xx, rate_limited, connection, bad_response */
  readonly reason: string
  readonly detail: string
}> {}

export class BookingSystemRejected extends Data.TaggedError("BookingSystemRejected")<{
  readonly accountId: string
  readonly operation: string
  /**
   * not_found, no_seats, not_allowed, invalid, unauthorized, hold_not_supported, hold_expired,
   * price_changed, invalid_phone (the guest's phone number was not accepted)
   */
  readonly reason: string
  readonly detail: string
}> {}

export type BookingSystemError = BookingSystemUnavailable | BookingSystemRejected

/** Where a booking was sold. `class` groups sources: the service's own checkout, an OTA, direct sales. */
export interface SalesChannel {
  readonly class: "service" | "ota" | "direct" | "reseller" | null
  readonly source: string | null
  readonly title: string | null
}

export interface PaxLine {
  readonly pricingCategoryId: string
  readonly title: string
  readonly quantity: number
}

/** One booked product line (Bókun: an activity booking) with its passengers. */
export interface BookingLine {
  /** The line's own id: stable for the line as long as it exists. */
  readonly lineId: string
  /** The whole booking's id and its code in the booking system. */
  readonly bookingId: string
  readonly bookingReference: string
  /** The seller's reference, e.g. our confirmation code when the service sold it. */
  readonly externalReference: string | null
  readonly status: "CONFIRMED" | "RESERVED" | "CANCELLED"
  readonly productId: string
  readonly productTitle: string | null
  readonly rateId: string | null
  readonly rateTitle: string | null
  readonly startTimeId: string | null
  readonly date: string
  readonly startTime: string | null
  readonly participants: number
  readonly pax: ReadonlyArray<PaxLine>
  readonly channel: SalesChannel
  readonly guest: { readonly name: string | null; readonly email: string | null; readonly phone: string | null }
  readonly pickup: { readonly place: string | null; readonly time: string | null } | null
  /** PAID, PARTIALLY_PAID, NOT_PAID, INVOICED, REFUNDED ... as the booking system says. */
  readonly paymentStatus: string | null
  readonly totalMinor: number
  readonly currency: string
  readonly createdAt: Date
  readonly updatedAt: Date | null
}

export interface Price {
  readonly pricingCategoryId: string
  readonly amountMinor: number
  readonly currency: string
}

export interface DepartureAvailability {
  readonly date: string
  readonly startTimeId: string
  readonly startTime: string | null
  /** null: unlimited. */
  readonly seatsLeft: number | null
  readonly soldOut: boolean
  readonly rates: ReadonlyArray<DepartureRate>
}

/**
 * One rate of a departure. `prices` are per guest of each pricing category. A rate priced per
 * booking (a private tour: one price for the whole party) has `pricePerBooking`: what any party
 * allowed on the rate costs; absent or null, the rate is priced per guest.
 */
export interface DepartureRate {
  readonly rateId: string
  readonly title: string | null
  readonly prices: ReadonlyArray<Price>
  readonly pricePerBooking?: { readonly amountMinor: number; readonly currency: string } | null
}

export interface PricingCategory {
  readonly id: string
  readonly title: string
  /** The adult (default) category. */
  readonly isDefault: boolean
  readonly minAge: number | null
  readonly maxAge: number | null
}

export interface Product {
  readonly id: string
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly durationMinutes: number | null
  readonly pricedPerBooking: boolean
  readonly rates: ReadonlyArray<{ readonly id: string; readonly title: string; readonly description: string | null }>
  readonly pricingCategories: ReadonlyArray<PricingCategory>
  readonly startTimes: ReadonlyArray<{ readonly id: string; readonly time: string }>
  readonly pickupPlaces: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly rating: { readonly average: number; readonly count: number } | null
  /** Whether this product can hold seats before payment (a reservation that later confirms or aborts). */
  readonly supportsHolds: boolean
}

export interface SeatRequest {
  readonly productId: string
  readonly date: string
  readonly startTimeId: string
  readonly rateId: string | null
  readonly pax: ReadonlyArray<{ readonly pricingCategoryId: string; readonly quantity: number }>
}

export interface Hold {
  readonly holdId: string
  readonly expiresAt: Date
  readonly totalMinor: number
  readonly currency: string
}

export interface Guest {
  readonly name: string
  readonly email: string | null
  readonly phone: string | null
}

/**
 * What the guest paid for a booking, outside the booking system (our payment provider): every
 * booking the service makes carries it, so the booking system reads it as paid.
 */
export interface BookingPayment {
  readonly amountMinor: number
  readonly currency: string
  /** The payment's id at the payment provider (the booking system's transaction reference). */
  readonly reference: string
  readonly paidAt: Date
}

export interface Booked {
  readonly bookingId: string
  readonly bookingReference: string
  readonly lines: ReadonlyArray<BookingLine>
}

export interface Balance {
  readonly bookingReference: string
  readonly totalMinor: number
  readonly paidMinor: number
  readonly dueMinor: number
  readonly currency: string
}

/** One page of the booking lines of bookings created in a range of days (`createdBookingLines`). */
export interface CreatedLinesPage {
  /** Lines of the page's bookings created in the range, every channel, cancelled ones included. */
  readonly lines: ReadonlyArray<BookingLine>
  /** The page to ask for next; null: this was the last one. */
  readonly nextPage: number | null
  /** Bookings the whole search matches (all pages). */
  readonly totalBookings: number
}

export interface BookingSystemClient {
  /** Every booking line with a departure day in [from, to], from every sales channel, cancelled ones included. */
  readonly bookingLines: (
    account: BookingSystemAccount,
    range: { readonly from: string; readonly to: string }
  ) => Effect.Effect<ReadonlyArray<BookingLine>, BookingSystemError>
  /**
   * One page (1, 2, …) of the booking lines of bookings CREATED on the UTC days [from, to] (both
   * included), whatever their departure day, from every sales channel, cancelled ones included;
   * holds that never became bookings are left out. One call per page, so the caller paces the
   * pages (`createdLinePages`); pages follow the bookings' creation time.
   */
  readonly createdBookingLines: (
    account: BookingSystemAccount,
    query: { readonly from: string; readonly to: string; readonly page: number }
  ) => Effect.Effect<CreatedLinesPage, BookingSystemError>
  /** One booking by its id or reference, with all its lines. */
  readonly booking: (
    account: BookingSystemAccount,
    bookingReference: string
  ) => Effect.Effect<ReadonlyArray<BookingLine>, BookingSystemError>
  /** Departures of a product with seats left and prices per rate and pricing category. */
  readonly availability: (
    account: BookingSystemAccount,
    query: { readonly productId: string; readonly from: string; readonly to: string }
  ) => Effect.Effect<ReadonlyArray<DepartureAvailability>, BookingSystemError>
  /** The product catalogue of the account. */
  readonly products: (account: BookingSystemAccount) => Effect.Effect<ReadonlyArray<Product>, BookingSystemError>
  /**
   * Hold seats until `expiresAt`. `idempotencyKey` makes a retry return the same hold.
   * Fails with reason hold_not_supported when the product cannot hold.
   */
  readonly hold: (
    account: BookingSystemAccount,
    request: SeatRequest & { readonly idempotencyKey: string; readonly holdSeconds: number }
  ) => Effect.Effect<Hold, BookingSystemError>
  /** Release a hold; releasing one that is gone already succeeds. */
  readonly releaseHold: (account: BookingSystemAccount, holdId: string) => Effect.Effect<void, BookingSystemError>
  /**
   * Book, either confirming a hold or directly. `externalReference` (our confirmation code) makes a
   * retry return the booking made the first time instead of booking twice. `payment` is what the
   * guest paid us: the booking carries it (it reads as paid in the booking system).
   */
  readonly book: (
    account: BookingSystemAccount,
    request: {
      readonly holdId: string | null
      readonly seats: SeatRequest | null
      readonly guest: Guest
      readonly externalReference: string
      readonly payment: BookingPayment
    }
  ) => Effect.Effect<Booked, BookingSystemError>
  /** Cancel a booking and release its seats; cancelling a cancelled booking succeeds. */
  readonly cancel: (
    account: BookingSystemAccount,
    bookingReference: string,
    note: string
  ) => Effect.Effect<void, BookingSystemError>
  /** Move one line to another day, start time and/or rate. */
  readonly move: (
    account: BookingSystemAccount,
    request: {
      readonly bookingReference: string
      readonly lineId: string
      readonly date: string
      readonly startTimeId: string | null
      readonly rateId: string | null
    }
  ) => Effect.Effect<BookingLine, BookingSystemError>
  /** What the booking still owes, as the booking system sees it. */
  readonly balance: (
    account: BookingSystemAccount,
    bookingReference: string
  ) => Effect.Effect<Balance, BookingSystemError>
}

/**
 * Every page of `createdBookingLines` over [from, to], read one after the other: the stream asks for
 * a page only when the previous one has been taken, so a consumer paces the reads by pausing
 * between elements (SalesLedger waits SALES_LEDGER_PAGE_PAUSE_MS).
 */
export const createdLinePages = (
  client: BookingSystemClient,
  account: BookingSystemAccount,
  range: { readonly from: string; readonly to: string }
): Stream.Stream<ReadonlyArray<BookingLine>, BookingSystemError> =>
  Stream.paginateEffect(1, (page: number) =>
    client.createdBookingLines(account, { ...range, page }).pipe(
      Effect.map((result) => [result.lines, Option.fromNullable(result.nextPage)] as const)
    ))

/** The port: picks the adapter for the account's kind. */
export class BookingSystem extends Context.Tag("Ports/BookingSystem")<BookingSystem, BookingSystemClient>() {}
