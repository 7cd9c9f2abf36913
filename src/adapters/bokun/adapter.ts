/**
 * The Bókun adapter: the port's operations as calls to Bókun's REST API.
 *
 * | port            | Bókun                                                                 | retried |
 * |-----------------|-----------------------------------------------------------------------|---------|
 * | bookingLines    | POST /booking.json/booking-search, every page (read-only)             | yes     |
 * | createdBooking… | POST /booking.json/booking-search with creationDateRange, one page    | yes     |
 * | booking         | GET  /booking.json/booking/{code}                                     | yes     |
 * | availability    | GET  /activity.json/{id}/availabilities?start=&end=                   | yes     |
 * | products        | POST /activity.json/search, GET /activity.json/{id}, …/pickup-places  | yes     |
 * | hold            | POST /checkout.json/submit (RESERVE_FOR_EXTERNAL_PAYMENT)             | no      |
 * | releaseHold     | POST /booking.json/{code}/abort-reserved                              | no      |
 * | book            | hold: update-customer + POST /checkout.json/confirm-reserved/{code};  | no      |
 * |                 | seats: submit (reserve) + confirm-reserved, or one submit (INVOICE)   |         |
 * |                 | when the product does not allow reservations; what was paid goes on   |         |
 * |                 | the confirmation (or the one submit): amount, currency, transaction   |         |
 * | cancel          | POST /booking.json/cancel-booking/{code}                              | no      |
 * | move            | POST /booking.json/edit (ActivityChangeDateAction / …RateAction)      | no      |
 * | balance         | GET  /booking.json/booking/{code}                                     | yes     |
 *
 * The reads by a range of days are in ./search.ts, the catalogue reads in ./catalogue.ts; the calls
 * about one booking (its detail, the checkout, cancel, move) are here.
 */
import { Clock, Effect, Schema } from "effect"
import { taggedAnswer, withAnswerSpan } from "../../observability/answerSpan.js"
import {
  type BookingPayment,
  type BookingSystemAccount,
  type BookingSystemClient,
  BookingSystemRejected,
  BookingSystemUnavailable,
  type Guest
} from "../../ports/BookingSystem.js"
import { type CatalogueOptions, makeCatalogueReads } from "./catalogue.js"
import { confirmBody, customerBody, reserveBody } from "./checkout.js"
import { type BokunHttp, type BokunHttpOptions, defaultHttpOptions, makeBokunHttp } from "./client.js"
import * as Dialect from "./dialect.js"
import { balanceOf, bookingLines } from "./mapping.js"
import { toMinor } from "./money.js"
import { invalid } from "./rejection.js"
import { makeBookingSearch, type SearchOptions } from "./search.js"

export interface BokunAdapterOptions extends BokunHttpOptions, SearchOptions, CatalogueOptions {}

export const defaultAdapterOptions: BokunAdapterOptions = {
  ...defaultHttpOptions,
  searchPageSize: 100,
  catalogueConcurrency: 4
}

/** Longest a Bókun reservation holds its seats. */
const MAX_HOLD_SECONDS = 30 * 60

const enc = encodeURIComponent
const Empty = Schema.Unknown

export const makeBokunAdapter = (options: BokunAdapterOptions = defaultAdapterOptions) =>
  Effect.map(makeBokunHttp(options), (http: BokunHttp): BookingSystemClient => {
    const bookingDetail = (account: BookingSystemAccount, reference: string, operation: string) =>
      http.request(account, {
        operation,
        method: "GET",
        route: "/booking.json/booking/{confirmationCode}",
        path: `/booking.json/booking/${enc(reference)}`,
        safe: true
      }, Dialect.Booking)

    const submitReservation = (
      account: BookingSystemAccount,
      operation: string,
      body: ReturnType<typeof reserveBody>,
      idempotencyKey: string
    ) =>
      http.request(account, {
        operation,
        method: "POST",
        route: "/checkout.json/submit",
        path: "/checkout.json/submit",
        body,
        headers: { "x-idempotency-key": idempotencyKey },
        safe: false
      }, Dialect.CheckoutResponse)

    const confirmReserved = (
      account: BookingSystemAccount,
      code: string,
      externalReference: string,
      payment: BookingPayment
    ) =>
      http.request(account, {
        operation: "confirmReserved",
        method: "POST",
        route: "/checkout.json/confirm-reserved/{confirmationCode}",
        path: `/checkout.json/confirm-reserved/${enc(code)}`,
        body: confirmBody(externalReference, payment),
        safe: false
      }, Dialect.BookingResponse)

    const updateCustomer = (account: BookingSystemAccount, code: string, guest: Guest) =>
      http.request(account, {
        operation: "updateCustomer",
        method: "POST",
        route: "/booking.json/update-customer/{confirmationCode}",
        path: `/booking.json/update-customer/${enc(code)}`,
        body: customerBody(guest),
        safe: false
      }, Empty)

    const booked = (account: BookingSystemAccount, booking: Dialect.Booking) => ({
      bookingId: String(booking.id),
      bookingReference: booking.confirmationCode,
      lines: bookingLines(booking, account)
    })

    // A rejection (404, sold out …) is the booking system's answer: the span ends OK (answerSpan.ts).
    const withSpan = (name: string, account: BookingSystemAccount) =>
      withAnswerSpan(
        `BookingSystem.${name}`,
        { attributes: { "bokun.account_id": account.id } },
        taggedAnswer("BookingSystemRejected"),
        () => "BookingSystemRejected"
      )

    const search = makeBookingSearch(http, options)
    const catalogue = makeCatalogueReads(http, options)

    return {
      bookingLines: search.bookingLines,

      createdBookingLines: search.createdBookingLines,

      booking: (account, reference) =>
        bookingDetail(account, reference, "booking").pipe(
          Effect.map((b) => bookingLines(b, account)),
          withSpan("booking", account)
        ),

      availability: (account, query) => catalogue.availability(account, query).pipe(withSpan("availability", account)),

      products: (account) => catalogue.products(account).pipe(withSpan("products", account)),

      hold: (account, request) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const result = yield* submitReservation(
            account,
            "reserve",
            reserveBody(request, null, null),
            request.idempotencyKey
          )
          const status = result.booking.status.toUpperCase()
          if (status !== "RESERVED") {
            // A replayed key whose hold is gone (lapsed, released, confirmed or cancelled since).
            return yield* new BookingSystemRejected({
              accountId: account.id,
              operation: "reserve",
              reason: status === "TIMEOUT" || status === "ABORTED" ? "hold_expired" : "not_allowed",
              detail: `reservation ${result.booking.confirmationCode} is ${status}`
            })
          }
          const requested = now + Math.min(request.holdSeconds, MAX_HOLD_SECONDS) * 1000
          const expiresAt = Math.min(result.reservationExpires ?? requested, requested)
          return {
            holdId: result.booking.confirmationCode,
            expiresAt: new Date(expiresAt),
            totalMinor: toMinor(result.booking.totalPrice, result.booking.currency),
            currency: result.booking.currency
          }
        }).pipe(withSpan("hold", account)),

      releaseHold: (account, holdId) =>
        http.request(account, {
          operation: "abortReserved",
          method: "POST",
          route: "/booking.json/{confirmationCode}/abort-reserved",
          path: `/booking.json/${enc(holdId)}/abort-reserved`,
          body: {},
          safe: false
        }, Empty).pipe(
          Effect.asVoid,
          // Gone already (aborted, lapsed, unknown): released is released.
          Effect.catchIf(
            (e): e is BookingSystemRejected => e._tag === "BookingSystemRejected" && e.reason === "not_found",
            () => Effect.void
          ),
          withSpan("releaseHold", account)
        ),

      book: (account, request) =>
        Effect.gen(function*() {
          if (request.holdId !== null) {
            yield* updateCustomer(account, request.holdId, request.guest)
            const confirmed = yield* confirmReserved(
              account,
              request.holdId,
              request.externalReference,
              request.payment
            )
            return booked(account, confirmed.booking)
          }
          if (request.seats === null) return yield* invalid(account, "book", "either a hold or seats are needed")
          const seats = request.seats
          // Reserve, then confirm; a product that does not allow reservations is booked in one
          // checkout instead (confirmed at once). Each with its own idempotency key: a retry gets the
          // booking the first attempt made.
          const reserved = yield* submitReservation(
            account,
            "reserve",
            reserveBody(seats, request.guest, request.externalReference),
            `book:${request.externalReference}`
          ).pipe(
            Effect.catchIf(
              (e): e is BookingSystemRejected =>
                e._tag === "BookingSystemRejected" && e.reason === "hold_not_supported",
              () =>
                submitReservation(
                  account,
                  "bookDirect",
                  reserveBody(seats, request.guest, request.externalReference, "INVOICE", request.payment),
                  `book-direct:${request.externalReference}`
                )
            )
          )
          if (reserved.booking.status.toUpperCase() === "CONFIRMED") return booked(account, reserved.booking)
          const confirmed = yield* confirmReserved(
            account,
            reserved.booking.confirmationCode,
            request.externalReference,
            request.payment
          )
          return booked(account, confirmed.booking)
        }).pipe(withSpan("book", account)),

      cancel: (account, reference, note) =>
        http.request(account, {
          operation: "cancelBooking",
          method: "POST",
          route: "/booking.json/cancel-booking/{confirmationCode}",
          path: `/booking.json/cancel-booking/${enc(reference)}`,
          body: { note, notify: false },
          safe: false
        }, Empty).pipe(Effect.asVoid, withSpan("cancel", account)),

      move: (account, request) =>
        Effect.gen(function*() {
          const actions: Array<unknown> = [{
            type: "ActivityChangeDateAction",
            activityBookingId: request.lineId,
            date: request.date,
            ...(request.startTimeId !== null ? { startTimeId: request.startTimeId } : {})
          }]
          if (request.rateId !== null) {
            actions.push({
              type: "ActivityChangeRateAction",
              activityBookingId: request.lineId,
              rateId: request.rateId
            })
          }
          const result = yield* http.request(account, {
            operation: "editBooking",
            method: "POST",
            route: "/booking.json/edit",
            path: "/booking.json/edit",
            body: actions,
            safe: false
          }, Dialect.BookingResponse)
          const line = bookingLines(result.booking, account).find((l) => l.lineId === request.lineId)
          if (!line) {
            return yield* new BookingSystemUnavailable({
              accountId: account.id,
              operation: "editBooking",
              reason: "bad_response",
              detail: `the answer does not contain line ${request.lineId}`
            })
          }
          return line
        }).pipe(withSpan("move", account)),

      balance: (account, reference) =>
        bookingDetail(account, reference, "booking").pipe(Effect.map(balanceOf), withSpan("balance", account))
    } satisfies BookingSystemClient
  })
