/**
 * The sandbox's Bókun REST API: the same paths, bodies and answers the adapter uses against
 * api.bokun.io, every call signed (auth.ts). Answers are built as the dialect's encoded types.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import * as Dialect from "../../adapters/bokun/dialect.js"
import { toMinor } from "../../adapters/bokun/money.js"
import { authenticate } from "./auth.js"
import { badRequest, SandboxFailure } from "./failure.js"
import type { FaultSettings } from "./faults.js"
import type { Store, VendorRow } from "./store.js"

const failureResponse = (f: SandboxFailure) =>
  HttpServerResponse.unsafeJson({ message: f.message, errorCode: f.errorCode }, { status: f.status })

const internalError = (cause: unknown) =>
  Effect.zipRight(
    Effect.logError("sandbox: request failed", cause),
    Effect.succeed(HttpServerResponse.unsafeJson({ message: "Internal Server Error" }, { status: 500 }))
  )

/**
 * Runs a handler and answers its value as JSON, a SandboxFailure with its status, anything else
 * (a database error, a defect) as 500.
 */
export const answer = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
  handler.pipe(
    Effect.map((body) => HttpServerResponse.unsafeJson(body ?? {})),
    Effect.catchAll((e) => (e instanceof SandboxFailure ? Effect.succeed(failureResponse(e)) : internalError(e))),
    // The in-process Sandbox methods (admin.ts) turn failures into defects: a SandboxFailure still answers its status.
    Effect.catchAllDefect((d) => (d instanceof SandboxFailure ? Effect.succeed(failureResponse(d)) : internalError(d)))
  )

export const body = <A, I>(schema: Schema.Schema<A, I>) =>
  HttpServerRequest.schemaBodyJson(schema).pipe(
    Effect.mapError((e) => badRequest(e._tag === "ParseError" ? `Invalid body: ${e.message}` : "Invalid JSON body"))
  )

export const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

export const numericParam = (name: string) =>
  Effect.flatMap(
    param(name),
    (value) => /^\d+$/.test(value) ? Effect.succeed(Number(value)) : Effect.fail(badRequest(`${name} must be a number`))
  )

const query = (name: string) =>
  Effect.map(HttpServerRequest.ParsedSearchParams, (params) => {
    const value = params[name]
    return typeof value === "string" ? value : null
  })

const answers = (details: ReadonlyArray<typeof Dialect.Answer.Type> | null | undefined) => {
  const of = (id: string) => details?.find((a) => a.questionId === id)?.values[0] ?? null
  return { firstName: of("firstName"), lastName: of("lastName"), email: of("email"), phone: of("phoneNumber") }
}

const toNumber = (id: string | number) => {
  const n = Number(id)
  return Number.isSafeInteger(n) ? Effect.succeed(n) : Effect.fail(badRequest(`${id} is not an id`))
}

const idOrNull = (id: string | number | null | undefined) => (id == null ? Effect.succeed(null) : toNumber(id))

/**
 * The payment taken outside Bókun that a confirmation (or a checkout that confirms at once)
 * carries: `amount` in the booking's currency, recorded as the booking's paid amount with the
 * transaction id. None when the request carries no amount.
 */
const paymentOf = (
  input: {
    readonly amount?: number | null | undefined
    readonly currency?: string | null | undefined
    readonly transactionDetails?: { readonly transactionId?: string | null | undefined } | null | undefined
  },
  currency: string
) => {
  if (input.amount == null) return Effect.succeed(null)
  if (!Number.isFinite(input.amount) || input.amount < 0) {
    return Effect.fail(badRequest(`Invalid amount ${input.amount}`))
  }
  if (input.currency != null && input.currency.toUpperCase() !== currency.toUpperCase()) {
    return Effect.fail(badRequest(`The payment is in ${input.currency}; the booking is in ${currency}`))
  }
  return Effect.succeed({
    paidMinor: toMinor(input.amount, currency),
    reference: input.transactionDetails?.transactionId ?? null
  })
}

/** An instant of a DateRangeFilter as Jackson reads it: epoch milliseconds, an ISO-8601 instant, or a day (00:00 UTC). */
const instantOf = (value: string | number, field: string) => {
  const millis = typeof value === "number"
    ? value
    : /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? Date.parse(`${value}T00:00:00Z`)
    : /^\d{4}-\d{2}-\d{2}T/.test(value)
    ? Date.parse(value)
    : Number.NaN
  return Number.isFinite(millis)
    ? Effect.succeed(new Date(millis))
    : Effect.fail(badRequest(`creationDateRange.${field} is not a date: ${value}`))
}

/** The search's range: by departure day, or by creation (Bókun's BookingQuery has both; one is needed here). */
const searchRange = (input: typeof Dialect.BookingSearchRequest.Type) =>
  Effect.gen(function*() {
    if (input.creationDateRange !== undefined) {
      const c = input.creationDateRange
      return {
        by: "creation" as const,
        from: yield* instantOf(c.from, "from"),
        to: yield* instantOf(c.to, "to"),
        includeLower: c.includeLower ?? true,
        includeUpper: c.includeUpper ?? true
      }
    }
    if (input.startDateRange !== undefined) {
      return {
        by: "start" as const,
        from: input.startDateRange.from.slice(0, 10),
        to: input.startDateRange.to.slice(0, 10)
      }
    }
    return yield* badRequest("startDateRange or creationDateRange is required")
  })

export const bokunApi = (store: Store, switchesOf: (accessKey: string | null) => Effect.Effect<FaultSettings>) => {
  /** A signed call on behalf of the vendor whose key signed it. */
  const signed = <A, E, R>(handler: (vendor: VendorRow) => Effect.Effect<A, E, R>) =>
    answer(Effect.flatMap(authenticate(store), handler))

  /** The vendor's refusals switched on (faults.ts): a phone it will not take, no new bookings. */
  const refusals = (vendor: VendorRow, what: { readonly phone: string | null; readonly booking: boolean }) =>
    Effect.gen(function*() {
      const switches = yield* switchesOf(vendor.access_key)
      if (switches.rejectPhone && what.phone !== null) {
        return yield* new SandboxFailure({
          status: 400,
          message: `Invalid phone number: ${what.phone}`,
          errorCode: "INVALID_PHONE_NUMBER"
        })
      }
      if (switches.refuseBookings && what.booking) {
        return yield* new SandboxFailure({
          status: 400,
          message: "The vendor does not accept this booking",
          errorCode: "NOT_ALLOWED"
        })
      }
    })

  const bookingAnswer = (id: number) => Effect.map(store.loadBookings([id]), (list) => ({ booking: list[0]! }))

  const checkout = (vendor: VendorRow) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const input = yield* body(Dialect.CheckoutRequest)
      const key = request.headers["x-idempotency-key"]
      const idempotencyKey = typeof key === "string" && key !== "" ? key : null
      const reserve = input.paymentMethod === "RESERVE_FOR_EXTERNAL_PAYMENT"
      // A hold without a guest is not a booking yet; one made with the guest (a direct booking) is.
      const customer = answers(input.directBooking.mainContactDetails)
      yield* refusals(vendor, { phone: customer.phone, booking: !reserve || customer.firstName !== null })
      const lines = yield* Effect.forEach(input.directBooking.activityBookings, (a) =>
        Effect.gen(function*() {
          const pax = new Map<number, number>()
          for (const p of a.pricingCategoryBookings) {
            const id = yield* toNumber(p.pricingCategoryId)
            pax.set(id, (pax.get(id) ?? 0) + 1)
          }
          return {
            productId: yield* toNumber(a.activityId),
            date: a.date,
            startTimeId: yield* toNumber(a.startTimeId),
            rateId: yield* idOrNull(a.rateId),
            pax,
            pickupPlaceId: yield* idOrNull(a.pickupPlaceId)
          }
        }))
      // A reservation is paid on confirmation; a booking confirmed by this checkout carries its payment now.
      const payment = reserve ? null : yield* paymentOf(input, vendor.currency)
      yield* store.expireHolds
      const made = yield* store.sql.withTransaction(Effect.gen(function*() {
        const existing = idempotencyKey === null
          ? undefined
          : yield* store.existingByIdempotencyKey(vendor.id, idempotencyKey)
        if (existing) return { id: existing.id, holdExpires: existing.hold_expires_at }
        return yield* store.insertBooking({
          vendor,
          status: reserve ? "RESERVED" : "CONFIRMED",
          lines,
          channelId: yield* store.serviceChannel(vendor.id),
          externalReference: input.directBooking.externalBookingReference ?? null,
          customer,
          idempotencyKey,
          checkCapacity: true,
          ...(payment !== null ? { paidMinor: payment.paidMinor, paymentReference: payment.reference } : {})
        })
      }))
      const { booking } = yield* bookingAnswer(made.id)
      const response: typeof Dialect.CheckoutResponse.Encoded = {
        booking,
        reservationExpires: made.holdExpires?.getTime() ?? null
      }
      return response
    })

  return HttpRouter.empty.pipe(
    HttpRouter.post(
      "/booking.json/booking-search",
      signed((vendor) =>
        Effect.gen(function*() {
          const input = yield* body(Dialect.BookingSearchRequest)
          const range = yield* searchRange(input)
          if (range.by === "creation" && (yield* switchesOf(vendor.access_key)).failCreationSearch) {
            return yield* new SandboxFailure({
              status: 503,
              message: "Booking search is unavailable",
              errorCode: "UNAVAILABLE"
            })
          }
          return yield* store.searchBookings(vendor.id, {
            range,
            statuses: input.bookingStatuses ?? null,
            page: input.page ?? 1,
            pageSize: input.pageSize ?? 50
          })
        })
      )
    ),
    HttpRouter.get(
      "/booking.json/booking/:code",
      signed((vendor) => Effect.flatMap(param("code"), (code) => store.bookingByCode(vendor.id, code)))
    ),
    HttpRouter.post(
      "/booking.json/cancel-booking/:code",
      signed((vendor) =>
        Effect.gen(function*() {
          const input = yield* body(Dialect.CancelRequest)
          yield* store.cancelBooking(vendor.id, yield* param("code"), input.note ?? null)
          return {}
        })
      )
    ),
    HttpRouter.post(
      "/booking.json/:code/abort-reserved",
      signed((vendor) =>
        Effect.gen(function*() {
          yield* store.abortReserved(vendor.id, yield* param("code"))
          return {}
        })
      )
    ),
    HttpRouter.post(
      "/booking.json/update-customer/:code",
      signed((vendor) =>
        Effect.gen(function*() {
          const code = yield* param("code")
          const customer = yield* body(Dialect.Customer)
          yield* refusals(vendor, { phone: customer.phoneNumber ?? null, booking: false })
          yield* store.updateCustomer(vendor.id, code, customer)
          return yield* Effect.map(store.bookingByCode(vendor.id, code), (booking) => ({ booking }))
        })
      )
    ),
    HttpRouter.post(
      "/booking.json/edit",
      signed((vendor) =>
        Effect.gen(function*() {
          const id = yield* store.editBooking(vendor.id, yield* body(Dialect.EditRequest))
          return yield* bookingAnswer(id)
        })
      )
    ),
    HttpRouter.post("/checkout.json/submit", signed(checkout)),
    HttpRouter.post(
      "/checkout.json/confirm-reserved/:code",
      signed((vendor) =>
        Effect.gen(function*() {
          const input = yield* body(Dialect.ConfirmReservedRequest)
          yield* refusals(vendor, { phone: null, booking: true })
          const payment = yield* paymentOf(input, vendor.currency)
          const id = yield* store.confirmReserved(
            vendor.id,
            yield* param("code"),
            input.externalBookingReference ?? null,
            payment
          )
          return yield* bookingAnswer(id)
        })
      )
    ),
    HttpRouter.post(
      "/activity.json/search",
      signed((vendor) =>
        Effect.gen(function*() {
          const input = yield* body(
            Schema.Struct({ page: Schema.optional(Schema.Number), pageSize: Schema.optional(Schema.Number) })
          )
          return yield* store.activitySearch(vendor.id, input.page ?? 1, input.pageSize ?? 20)
        })
      )
    ),
    HttpRouter.get(
      "/activity.json/:id",
      signed((vendor) => Effect.flatMap(numericParam("id"), (id) => store.activity(vendor.id, id)))
    ),
    HttpRouter.get(
      "/activity.json/:id/pickup-places",
      signed((vendor) => Effect.flatMap(numericParam("id"), (id) => store.pickupPlaces(vendor.id, id)))
    ),
    HttpRouter.get(
      "/activity.json/:id/availabilities",
      signed((vendor) =>
        Effect.gen(function*() {
          const id = yield* numericParam("id")
          const start = yield* query("start")
          const end = yield* query("end")
          if (start === null || end === null) return yield* badRequest("start and end are required")
          return yield* store.availabilities(vendor.id, id, start, end)
        })
      )
    )
  )
}
