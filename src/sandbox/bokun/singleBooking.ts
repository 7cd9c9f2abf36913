/** One booking straight into the booking system, as a sale on another channel would make it (tests). */
import { Effect } from "effect"
import { badRequest } from "./failure.js"
import type { Store } from "./store.js"
import type { ChannelClass } from "./vendors.js"

export interface BookingSpec {
  readonly vendorId: number
  readonly productId: number
  /** Local departure day. */
  readonly date: string
  /** `HH:MM` of one of the product's start times, or its id. Default: the first. */
  readonly startTime?: string
  readonly startTimeId?: number
  readonly rateId?: number
  /** Passengers by pricing category id; default `participants` (2) in the default category. */
  readonly pax?: ReadonlyArray<{ pricingCategoryId: number; quantity: number }>
  readonly participants?: number
  /** A channel of the vendor by class (its first) or by id. Default: the first OTA. */
  readonly channel?: ChannelClass | number
  readonly status?: "CONFIRMED" | "RESERVED" | "CANCELLED"
  readonly guest?: { firstName: string; lastName: string; email?: string | null; phone?: string | null }
  readonly externalReference?: string | null
  readonly pickupPlaceId?: number | null
  readonly paidMinor?: number
  readonly paymentStatus?: string | null
  /** Refuse when the departure is full (as a real sale would). Default false: tests may overbook. */
  readonly checkCapacity?: boolean
  /** When the booking was made. Default: now. */
  readonly createdAt?: Date
}

export interface SeededBooking {
  readonly bookingId: number
  readonly confirmationCode: string
  readonly lineIds: ReadonlyArray<number>
}

const productShape = (store: Store, productId: number) =>
  Effect.all({
    startTimes: store.sql<
      { id: number; time: string }
    >`SELECT id, time FROM bokun_sandbox.start_times WHERE product_id = ${productId} ORDER BY time`,
    categories: store.sql<{ id: number; is_default: boolean }>`
      SELECT id, is_default FROM bokun_sandbox.pricing_categories WHERE product_id = ${productId} ORDER BY position, id`
  })

const channelId = (store: Store, vendorId: number, channel: ChannelClass | number | undefined) =>
  typeof channel === "number"
    ? Effect.succeed(channel)
    : store.sql<{ id: number }>`
        SELECT id FROM bokun_sandbox.channels WHERE vendor_id = ${vendorId} AND class = ${
      channel ?? "ota"
    } ORDER BY id LIMIT 1`.pipe(
      Effect.map((rows) => rows[0]?.id ?? null)
    )

/** Adds one booking as if sold elsewhere (an OTA by default), straight into the booking system. */
export const addBooking = (store: Store, spec: BookingSpec) =>
  Effect.gen(function*() {
    const vendor = yield* store.vendorById(spec.vendorId)
    const shape = yield* productShape(store, spec.productId)
    const start = spec.startTimeId ??
      (spec.startTime ? shape.startTimes.find((s) => s.time === spec.startTime)?.id : shape.startTimes[0]?.id)
    if (start === undefined) return yield* badRequest(`No start time ${spec.startTime} on product ${spec.productId}`)
    const adult = shape.categories.find((c) => c.is_default) ?? shape.categories[0]
    const pax = new Map(
      (spec.pax ?? [{ pricingCategoryId: adult!.id, quantity: spec.participants ?? 2 }]).map((
        p
      ) => [p.pricingCategoryId, p.quantity])
    )
    const made = yield* store.insertBooking({
      vendor,
      status: spec.status ?? "CONFIRMED",
      lines: [{
        productId: spec.productId,
        date: spec.date,
        startTimeId: start,
        rateId: spec.rateId ?? null,
        pax,
        pickupPlaceId: spec.pickupPlaceId ?? null
      }],
      channelId: yield* channelId(store, vendor.id, spec.channel),
      externalReference: spec.externalReference ?? null,
      customer: {
        firstName: spec.guest?.firstName ?? "Test",
        lastName: spec.guest?.lastName ?? "Guest",
        email: spec.guest?.email ?? null,
        phone: spec.guest?.phone ?? null
      },
      idempotencyKey: null,
      checkCapacity: spec.checkCapacity ?? false,
      ...(spec.createdAt !== undefined ? { createdAt: spec.createdAt } : {}),
      ...(spec.paidMinor !== undefined ? { paidMinor: spec.paidMinor } : {}),
      ...(spec.paymentStatus !== undefined ? { paymentStatus: spec.paymentStatus } : {})
    })
    const [booking] = yield* store.sql<{ confirmation_code: string }>`
      SELECT confirmation_code FROM bokun_sandbox.bookings WHERE id = ${made.id}`
    const lines = yield* store.sql<
      { id: number }
    >`SELECT id FROM bokun_sandbox.product_bookings WHERE booking_id = ${made.id} ORDER BY id`
    const seeded: SeededBooking = {
      bookingId: made.id,
      confirmationCode: booking!.confirmation_code,
      lineIds: lines.map((l) => l.id)
    }
    return seeded
  })
