/**
 * The JSON Bókun's REST API (v1, api.bokun.io) speaks, as far as the adapter reads or writes it.
 * The adapter decodes responses with these schemas; the sandbox builds its answers as their
 * `Encoded` types, so both sides agree on one description of the dialect.
 *
 * Ids are numbers in Bókun; strings are accepted too. Dates of departures are epoch milliseconds of
 * the local calendar day at 00:00 UTC; `startDateTime` and `creationDate` are real instants.
 * Amounts are decimal numbers in the currency's major unit.
 */
import { Schema } from "effect"

const Id = Schema.Union(Schema.Number, Schema.String)
const opt = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))

export const Titled = Schema.Struct({ id: Id, title: opt(Schema.String) })

/** An error body: `{ message }`, plus an `errorCode` where the sandbox (and some Bókun calls) give one. */
export const ErrorBody = Schema.Struct({
  message: opt(Schema.String),
  errorCode: opt(Schema.String)
})
export type ErrorBody = typeof ErrorBody.Type

export const PricingCategoryBooking = Schema.Struct({
  pricingCategoryId: Id,
  pricingCategory: opt(Titled),
  quantity: Schema.Number
})

/** One booked product of a booking (Bókun: product booking / activity booking). */
export const ProductBooking = Schema.Struct({
  id: Id,
  productConfirmationCode: opt(Schema.String),
  status: Schema.String,
  product: Titled,
  startDate: Schema.Number,
  startDateTime: opt(Schema.Number),
  startTime: opt(Schema.String),
  startTimeId: opt(Id),
  rateId: opt(Id),
  rateTitle: opt(Schema.String),
  totalParticipants: Schema.Number,
  totalPrice: opt(Schema.Number),
  fields: opt(Schema.Struct({
    priceCategoryBookings: opt(Schema.Array(PricingCategoryBooking)),
    pickup: opt(Schema.Boolean),
    pickupPlace: opt(Titled),
    pickupTime: opt(Schema.String)
  }))
})
export type ProductBooking = typeof ProductBooking.Type

export const Customer = Schema.Struct({
  firstName: opt(Schema.String),
  lastName: opt(Schema.String),
  email: opt(Schema.String),
  phoneNumber: opt(Schema.String)
})

/** A booking (the "order"): customer, money, channel and its product bookings. */
export const Booking = Schema.Struct({
  id: Id,
  confirmationCode: Schema.String,
  externalBookingReference: opt(Schema.String),
  status: Schema.String,
  creationDate: Schema.Number,
  lastModifiedDate: opt(Schema.Number),
  currency: Schema.String,
  totalPrice: Schema.Number,
  totalPaid: opt(Schema.Number),
  totalDue: opt(Schema.Number),
  paymentStatus: opt(Schema.String),
  customer: opt(Customer),
  channel: opt(Titled),
  productBookings: Schema.Array(ProductBooking)
})
export type Booking = typeof Booking.Type

/**
 * A date range of a booking search (Bókun's Java client: `DateRangeFilter`): `from`/`to` as a day
 * `yyyy-MM-dd`, an ISO-8601 instant or epoch milliseconds (Jackson reads all three into a Date),
 * bounds included unless `includeLower`/`includeUpper` say otherwise.
 */
export const DateRange = Schema.Struct({
  from: Schema.Union(Schema.String, Schema.Number),
  to: Schema.Union(Schema.String, Schema.Number),
  includeLower: Schema.optional(Schema.Boolean),
  includeUpper: Schema.optional(Schema.Boolean)
})

/**
 * POST /booking.json/booking-search (Bókun's Java client: `BookingQuery`): by departure day
 * (`startDateRange`, days) or by the booking's creation (`creationDateRange`, instants); one of the
 * two is given.
 */
export const BookingSearchRequest = Schema.Struct({
  bookingRole: Schema.optional(Schema.String),
  startDateRange: Schema.optional(Schema.Struct({
    from: Schema.String,
    to: Schema.String,
    includeLower: Schema.optional(Schema.Boolean),
    includeUpper: Schema.optional(Schema.Boolean)
  })),
  creationDateRange: Schema.optional(DateRange),
  bookingStatuses: Schema.optional(Schema.Array(Schema.String)),
  page: Schema.optional(Schema.Number),
  pageSize: Schema.optional(Schema.Number)
})
export const BookingSearchResult = Schema.Struct({
  totalHits: Schema.Number,
  items: Schema.Array(Booking)
})

export const Money = Schema.Struct({ amount: Schema.Number, currency: Schema.String })

/** GET /activity.json/{id}/availabilities?start=&end= answers an array of these. */
export const Availability = Schema.Struct({
  id: Schema.String,
  activityId: Id,
  date: Schema.Number,
  startTime: opt(Schema.String),
  startTimeId: Id,
  availabilityCount: opt(Schema.Number),
  unlimitedAvailability: opt(Schema.Boolean),
  soldOut: opt(Schema.Boolean),
  unavailable: opt(Schema.Boolean),
  defaultRateId: opt(Id),
  rates: opt(Schema.Array(Titled)),
  pricesByRate: Schema.Array(Schema.Struct({
    activityRateId: Id,
    pricePerCategoryUnit: Schema.Array(Schema.Struct({ id: Id, amount: Money })),
    pricePerBooking: opt(Money)
  }))
})
export const Availabilities = Schema.Array(Availability)

/** POST /activity.json/search */
export const ActivitySearchResult = Schema.Struct({
  totalHits: Schema.Number,
  items: Schema.Array(Titled)
})

/** GET /activity.json/{id} */
export const Activity = Schema.Struct({
  id: Id,
  title: Schema.String,
  timeZone: opt(Schema.String),
  durationMinutes: opt(Schema.Number),
  vendor: Schema.Struct({
    id: Id,
    title: opt(Schema.String),
    currencyCode: Schema.String,
    timeZone: opt(Schema.String)
  }),
  rates: Schema.Array(Schema.Struct({
    id: Id,
    title: Schema.String,
    description: opt(Schema.String),
    pricedPerPerson: opt(Schema.Boolean)
  })),
  pricingCategories: Schema.Array(Schema.Struct({
    id: Id,
    title: Schema.String,
    ticketCategory: opt(Schema.String),
    defaultCategory: opt(Schema.Boolean),
    minAge: opt(Schema.Number),
    maxAge: opt(Schema.Number)
  })),
  startTimes: Schema.Array(Schema.Struct({ id: Id, hour: Schema.Number, minute: Schema.Number })),
  reviewRating: opt(Schema.Number),
  reviewCount: opt(Schema.Number),
  /** Whether the product accepts RESERVE_FOR_EXTERNAL_PAYMENT checkouts (a hold before payment). */
  reservationsAllowed: opt(Schema.Boolean)
})
export type Activity = typeof Activity.Type

/** GET /activity.json/{id}/pickup-places */
export const PickupPlaces = Schema.Struct({ pickupPlaces: Schema.Array(Titled) })

export const Answer = Schema.Struct({ questionId: Schema.String, values: Schema.Array(Schema.String) })

/** One product of a direct booking request: one pricing category entry per passenger. */
export const ActivityBookingRequest = Schema.Struct({
  activityId: Id,
  rateId: opt(Id),
  date: Schema.String,
  startTimeId: Id,
  pickup: opt(Schema.Boolean),
  pickupPlaceId: opt(Id),
  pricingCategoryBookings: Schema.Array(Schema.Struct({ pricingCategoryId: Id }))
})

/**
 * The payment taken outside Bókun, on a confirmation (and on a checkout that confirms at once):
 * `amount` in major units, `currency`, and the transaction (docs/booking-system.md, "What was paid").
 */
const paymentFields = {
  amount: opt(Schema.Number),
  currency: opt(Schema.String),
  transactionDetails: opt(Schema.Struct({
    transactionId: opt(Schema.String),
    transactionDate: opt(Schema.String),
    cardBrand: opt(Schema.String),
    last4: opt(Schema.String)
  }))
}

/** POST /checkout.json/submit */
export const CheckoutRequest = Schema.Struct({
  checkoutOption: Schema.String,
  paymentMethod: Schema.String,
  source: Schema.String,
  sendNotificationToMainContact: opt(Schema.Boolean),
  ...paymentFields,
  directBooking: Schema.Struct({
    externalBookingReference: opt(Schema.String),
    mainContactDetails: opt(Schema.Array(Answer)),
    activityBookings: Schema.Array(ActivityBookingRequest)
  })
})
export const CheckoutResponse = Schema.Struct({
  booking: Booking,
  /** Until when a RESERVED booking holds its seats (epoch ms). */
  reservationExpires: opt(Schema.Number)
})

/** POST /checkout.json/confirm-reserved/{confirmationCode} */
export const ConfirmReservedRequest = Schema.Struct({
  externalBookingReference: opt(Schema.String),
  sendNotificationToMainContact: opt(Schema.Boolean),
  ...paymentFields
})
export const BookingResponse = Schema.Struct({ booking: Booking })

/** POST /booking.json/cancel-booking/{confirmationCode} */
export const CancelRequest = Schema.Struct({ note: opt(Schema.String), notify: opt(Schema.Boolean) })

/** POST /booking.json/edit: a list of actions applied together. */
export const EditAction = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("ActivityChangeDateAction"),
    activityBookingId: Id,
    date: Schema.String,
    startTimeId: opt(Id)
  }),
  Schema.Struct({
    type: Schema.Literal("ActivityChangeRateAction"),
    activityBookingId: Id,
    rateId: Id
  })
)
export const EditRequest = Schema.Array(EditAction)

/** Statuses a booking or product booking can have in Bókun. */
export const LIVE_STATUSES = ["CONFIRMED", "RESERVED", "ARRIVED", "NO_SHOW"] as const
export const DEAD_STATUSES = ["CANCELLED"] as const
/** Holds that lapsed or were abandoned: never bookings. */
export const ABANDONED_STATUSES = ["TIMEOUT", "ABORTED", "CART", "ERROR", "REQUESTED", "REJECTED"] as const
