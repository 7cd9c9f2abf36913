/**
 * Seeding the sandbox: vendors (each one a Bókun account with its keys) with their products, and
 * bookings, either generated deterministically from a seed over a range of local days (spread over
 * channels, start times, rates, pax mixes and payment states, some cancelled, chosen days filled to
 * capacity) or added, cancelled and deleted one at a time by tests to simulate changes.
 * `bulkBookings` writes ~100,000 lines in one set-based statement for the mirror benchmark.
 */
import { Clock, Effect } from "effect"
import { randomBytes } from "node:crypto"
import { badRequest } from "./failure.js"
import { seededRng } from "./random.js"
import type { Store, VendorRow } from "./store.js"
import { addDays, daysIn, localDay } from "./time.js"

export type ChannelClass = "service" | "ota" | "direct" | "reseller"

export interface ProductSpec {
  readonly title: string
  /** Local `HH:MM` departures, every day. */
  readonly startTimes: ReadonlyArray<string>
  /** Seats per departure; null: unlimited. Default 20. */
  readonly capacity?: number | null
  readonly durationMinutes?: number | null
  readonly pricedPerBooking?: boolean
  /** Whether seats can be held before payment (RESERVE_FOR_EXTERNAL_PAYMENT). Default true. */
  readonly supportsHolds?: boolean
  /** Default: the vendor's. */
  readonly timezone?: string
  /** Default: one default category "Adult". The first with isDefault (or the first) is the default. */
  readonly pricingCategories?: ReadonlyArray<{ title: string; isDefault?: boolean; minAge?: number | null; maxAge?: number | null }>
  /** Prices in minor units by pricing category title. Default: one rate "Standard" at 50000 per category. */
  readonly rates?: ReadonlyArray<{ title: string; description?: string | null; prices: Readonly<Record<string, number>> }>
  readonly pickupPlaces?: ReadonlyArray<string | { title: string; minutesBefore?: number }>
  readonly rating?: { average: number; count: number } | null
}

export interface VendorSpec {
  readonly title: string
  /** IANA zone of the vendor (and default of its products). */
  readonly timezone: string
  readonly currency: string
  /** Default: random hex keys. */
  readonly accessKey?: string
  readonly secretKey?: string
  /** Prefix of confirmation codes. Default: the title's initials. */
  readonly codePrefix?: string
  /** How long a reservation holds seats. Default 1800 (Bókun's 30 minutes). */
  readonly holdSeconds?: number
  /** Default: DEFAULT_CHANNELS. Exactly one `service` channel is kept (added when missing). */
  readonly channels?: ReadonlyArray<{ title: string; class: ChannelClass; weight?: number }>
  readonly products?: ReadonlyArray<ProductSpec>
}

export interface SandboxProduct {
  readonly id: number
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly capacity: number | null
  readonly supportsHolds: boolean
  readonly startTimes: ReadonlyArray<{ id: number; time: string }>
  readonly rates: ReadonlyArray<{ id: number; title: string }>
  readonly pricingCategories: ReadonlyArray<{ id: number; title: string; isDefault: boolean }>
  readonly pickupPlaces: ReadonlyArray<{ id: number; title: string }>
}

export interface SandboxVendor {
  readonly id: number
  readonly title: string
  readonly accessKey: string
  readonly secretKey: string
  readonly timezone: string
  readonly currency: string
  /** The channel the vendor's API key books through: give it to the account as serviceChannelId. */
  readonly serviceChannelId: number
  readonly channels: ReadonlyArray<{ id: number; title: string; class: ChannelClass }>
  readonly products: ReadonlyArray<SandboxProduct>
}

export const DEFAULT_CHANNELS: ReadonlyArray<{ title: string; class: ChannelClass; weight: number }> = [
  { title: "Partner checkout (API)", class: "service", weight: 3 },
  { title: "Viator", class: "ota", weight: 3 },
  { title: "GetYourGuide", class: "ota", weight: 3 },
  { title: "Expedia", class: "ota", weight: 1 },
  { title: "Direct booking", class: "direct", weight: 2 },
  { title: "Walk-in", class: "direct", weight: 1 },
  { title: "Hotel Concierge Desk", class: "reseller", weight: 1 }
]

const initials = (title: string) =>
  title.split(/\s+/).filter((w) => /^[A-Za-z]/.test(w)).map((w) => w[0]!.toUpperCase()).join("").slice(0, 3) || "SBX"

// ------------------------------------------------------------------------------ vendors

export const createVendor = (store: Store, spec: VendorSpec) =>
  store.sql.withTransaction(Effect.gen(function*() {
    const { sql } = store
    const accessKey = spec.accessKey ?? randomBytes(16).toString("hex")
    const secretKey = spec.secretKey ?? randomBytes(16).toString("hex")
    const [vendor] = yield* sql<{ id: number }>`
      INSERT INTO bokun_sandbox.vendors ${sql.insert({
      title: spec.title,
      code_prefix: spec.codePrefix ?? initials(spec.title),
      access_key: accessKey,
      secret_key: secretKey,
      timezone: spec.timezone,
      currency: spec.currency,
      hold_seconds: spec.holdSeconds ?? 1800
    })} RETURNING id`
    const vendorId = vendor!.id
    const channelSpecs = spec.channels ?? DEFAULT_CHANNELS
    const withService = channelSpecs.some((c) => c.class === "service")
      ? channelSpecs.filter((c, i) => c.class !== "service" || channelSpecs.findIndex((x) => x.class === "service") === i)
      : [DEFAULT_CHANNELS[0]!, ...channelSpecs]
    const channels = yield* sql<{ id: number; title: string; class: ChannelClass }>`
      INSERT INTO bokun_sandbox.channels ${sql.insert(withService.map((c) => ({
      vendor_id: vendorId,
      title: c.title,
      class: c.class,
      weight: c.weight ?? 1
    })))} RETURNING id, title, class`
    const products: Array<SandboxProduct> = []
    for (const p of spec.products ?? []) products.push(yield* createProduct(store, vendorId, spec, p))
    const vendorView: SandboxVendor = {
      id: vendorId,
      title: spec.title,
      accessKey,
      secretKey,
      timezone: spec.timezone,
      currency: spec.currency,
      serviceChannelId: channels.find((c) => c.class === "service")!.id,
      channels,
      products
    }
    yield* store.changed
    return vendorView
  }))

export const createProduct = (
  store: Store,
  vendorId: number,
  vendor: Pick<VendorSpec, "timezone" | "currency">,
  spec: ProductSpec
) =>
  Effect.gen(function*() {
    const { sql } = store
    const timezone = spec.timezone ?? vendor.timezone
    const [row] = yield* sql<{ id: number }>`
      INSERT INTO bokun_sandbox.products ${sql.insert({
      vendor_id: vendorId,
      title: spec.title,
      timezone,
      currency: vendor.currency,
      duration_minutes: spec.durationMinutes ?? null,
      priced_per_booking: spec.pricedPerBooking ?? false,
      supports_holds: spec.supportsHolds ?? true,
      capacity: spec.capacity === undefined ? 20 : spec.capacity,
      rating_average: spec.rating?.average ?? null,
      rating_count: spec.rating?.count ?? null
    })} RETURNING id`
    const productId = row!.id
    if (spec.startTimes.length === 0) return yield* badRequest(`${spec.title}: a product needs a start time`)
    const startTimes = yield* sql<{ id: number; time: string }>`
      INSERT INTO bokun_sandbox.start_times ${sql.insert(spec.startTimes.map((time) => ({ product_id: productId, time })))}
      RETURNING id, time`
    const categorySpecs = spec.pricingCategories ?? [{ title: "Adult", isDefault: true }]
    const defaultIndex = Math.max(0, categorySpecs.findIndex((c) => c.isDefault))
    const categories = yield* sql<{ id: number; title: string; is_default: boolean }>`
      INSERT INTO bokun_sandbox.pricing_categories ${sql.insert(categorySpecs.map((c, i) => ({
      product_id: productId,
      title: c.title,
      is_default: i === defaultIndex,
      min_age: c.minAge ?? null,
      max_age: c.maxAge ?? null,
      position: i
    })))} RETURNING id, title, is_default`
    const rateSpecs = spec.rates ?? [{ title: "Standard", prices: Object.fromEntries(categorySpecs.map((c) => [c.title, 50000])) }]
    const rates: Array<{ id: number; title: string }> = []
    for (const [i, r] of rateSpecs.entries()) {
      const [rate] = yield* sql<{ id: number; title: string }>`
        INSERT INTO bokun_sandbox.rates ${sql.insert({ product_id: productId, title: r.title, description: r.description ?? null, position: i })}
        RETURNING id, title`
      rates.push(rate!)
      const priced = categories.filter((c) => r.prices[c.title] !== undefined)
      if (priced.length === 0) return yield* badRequest(`${spec.title} / ${r.title}: no price for any pricing category`)
      yield* sql`INSERT INTO bokun_sandbox.prices ${sql.insert(priced.map((c) => ({
        rate_id: rate!.id,
        pricing_category_id: c.id,
        amount_minor: r.prices[c.title]!
      })))}`
    }
    const pickupSpecs = (spec.pickupPlaces ?? []).map((p) => (typeof p === "string" ? { title: p } : p))
    const pickupPlaces = pickupSpecs.length === 0 ? [] : yield* sql<{ id: number; title: string }>`
      INSERT INTO bokun_sandbox.pickup_places ${sql.insert(pickupSpecs.map((p) => ({
      product_id: productId,
      title: p.title,
      minutes_before: p.minutesBefore ?? 30
    })))} RETURNING id, title`
    const product: SandboxProduct = {
      id: productId,
      title: spec.title,
      timezone,
      currency: vendor.currency,
      capacity: spec.capacity === undefined ? 20 : spec.capacity,
      supportsHolds: spec.supportsHolds ?? true,
      startTimes: [...startTimes].sort((a, b) => a.time.localeCompare(b.time)),
      rates,
      pricingCategories: categories.map((c) => ({ id: c.id, title: c.title, isDefault: c.is_default })),
      pickupPlaces
    }
    return product
  })

/** Sets the capacity of one departure (a sold-out day, a bigger boat). */
export const setDepartureCapacity = (
  store: Store,
  input: { productId: number; startTimeId: number; date: string; capacity: number }
) =>
  store.sql`
    INSERT INTO bokun_sandbox.departures (product_id, start_time_id, date, capacity)
    VALUES (${input.productId}, ${input.startTimeId}, ${input.date}, ${input.capacity})
    ON CONFLICT (product_id, start_time_id, date) DO UPDATE SET capacity = EXCLUDED.capacity`.pipe(
    Effect.zipRight(store.changed)
  )

// ------------------------------------------------------------------------------ single bookings

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
}

export interface SeededBooking {
  readonly bookingId: number
  readonly confirmationCode: string
  readonly lineIds: ReadonlyArray<number>
}

const productShape = (store: Store, productId: number) =>
  Effect.all({
    startTimes: store.sql<{ id: number; time: string }>`SELECT id, time FROM bokun_sandbox.start_times WHERE product_id = ${productId} ORDER BY time`,
    categories: store.sql<{ id: number; is_default: boolean }>`
      SELECT id, is_default FROM bokun_sandbox.pricing_categories WHERE product_id = ${productId} ORDER BY position, id`
  })

const channelId = (store: Store, vendorId: number, channel: ChannelClass | number | undefined) =>
  typeof channel === "number"
    ? Effect.succeed(channel)
    : store.sql<{ id: number }>`
        SELECT id FROM bokun_sandbox.channels WHERE vendor_id = ${vendorId} AND class = ${channel ?? "ota"} ORDER BY id LIMIT 1`.pipe(
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
      (spec.pax ?? [{ pricingCategoryId: adult!.id, quantity: spec.participants ?? 2 }]).map((p) => [p.pricingCategoryId, p.quantity])
    )
    const made = yield* store.insertBooking({
      vendor,
      status: spec.status ?? "CONFIRMED",
      lines: [{ productId: spec.productId, date: spec.date, startTimeId: start, rateId: spec.rateId ?? null, pax, pickupPlaceId: spec.pickupPlaceId ?? null }],
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
      ...(spec.paidMinor !== undefined ? { paidMinor: spec.paidMinor } : {}),
      ...(spec.paymentStatus !== undefined ? { paymentStatus: spec.paymentStatus } : {})
    })
    const [booking] = yield* store.sql<{ confirmation_code: string }>`
      SELECT confirmation_code FROM bokun_sandbox.bookings WHERE id = ${made.id}`
    const lines = yield* store.sql<{ id: number }>`SELECT id FROM bokun_sandbox.product_bookings WHERE booking_id = ${made.id} ORDER BY id`
    const seeded: SeededBooking = { bookingId: made.id, confirmationCode: booking!.confirmation_code, lineIds: lines.map((l) => l.id) }
    return seeded
  })

// ------------------------------------------------------------------------------ generated bookings

export interface GenerateSpec {
  readonly vendorId: number
  /** Local departure days, both included. */
  readonly from: string
  readonly to: string
  readonly seed: number
  /** Average share of each departure's seats sold (0..1). Default 0.6. */
  readonly fill?: number
  /** Days on which every departure is sold to capacity (the demo's "full" days). */
  readonly fullDays?: ReadonlyArray<string>
  /** Share of bookings that are cancelled (their seats freed). Default 0.08. */
  readonly cancelledShare?: number
  /** Seats assumed for departures without a capacity (unlimited). Default 20. */
  readonly unlimitedAs?: number
}

const FIRST_NAMES = ["Anna", "Lars", "Sofia", "Ola", "Emma", "Noah", "Ingrid", "Mateo", "Yuki", "Aisha", "Liam", "Chloé",
  "Kari", "João", "Maria", "Jonas", "Elif", "Priya", "Tomás", "Freya", "Hiroshi", "Zanele", "Nora", "Luca"]
const LAST_NAMES = ["Berg", "Hansen", "Silva", "García", "Müller", "Smith", "Tanaka", "Kowalski", "Johansson", "Dubois",
  "Rossi", "Nguyen", "Olsen", "Costa", "Patel", "O'Brien", "Novak", "Lindqvist", "Santos", "Kim"]

interface GenProduct {
  readonly id: number
  readonly capacity: number | null
  readonly pricedPerBooking: boolean
  readonly starts: ReadonlyArray<number>
  readonly rates: ReadonlyArray<{ id: number; prices: ReadonlyMap<number, number> }>
  readonly categories: ReadonlyArray<{ id: number; title: string; isDefault: boolean }>
  readonly pickups: ReadonlyArray<number>
}

const loadGenProducts = (store: Store, vendorId: number) =>
  Effect.gen(function*() {
    const { sql } = store
    const products = yield* sql<{ id: number; capacity: number | null; priced_per_booking: boolean }>`
      SELECT id, capacity, priced_per_booking FROM bokun_sandbox.products WHERE vendor_id = ${vendorId} ORDER BY id`
    const result: Array<GenProduct> = []
    for (const p of products) {
      const starts = yield* sql<{ id: number }>`SELECT id FROM bokun_sandbox.start_times WHERE product_id = ${p.id} ORDER BY time`
      const prices = yield* sql<{ rate_id: number; category_id: number; amount_minor: number }>`
        SELECT r.id AS rate_id, pr.pricing_category_id AS category_id, pr.amount_minor
        FROM bokun_sandbox.rates r JOIN bokun_sandbox.prices pr ON pr.rate_id = r.id
        WHERE r.product_id = ${p.id} ORDER BY r.position, r.id`
      const categories = yield* sql<{ id: number; title: string; is_default: boolean }>`
        SELECT id, title, is_default FROM bokun_sandbox.pricing_categories WHERE product_id = ${p.id} ORDER BY position, id`
      const pickups = yield* sql<{ id: number }>`SELECT id FROM bokun_sandbox.pickup_places WHERE product_id = ${p.id} ORDER BY id`
      const rateIds = [...new Set(prices.map((r) => r.rate_id))]
      result.push({
        id: p.id,
        capacity: p.capacity,
        pricedPerBooking: p.priced_per_booking,
        starts: starts.map((s) => s.id),
        rates: rateIds.map((id) => ({
          id,
          prices: new Map(prices.filter((r) => r.rate_id === id).map((r) => [r.category_id, r.amount_minor]))
        })),
        categories: categories.map((c) => ({ id: c.id, title: c.title, isDefault: c.is_default })),
        pickups: pickups.map((x) => x.id)
      })
    }
    return result
  })

/**
 * Bookings over the local days [from, to] for every product and departure of the vendor, the same
 * for the same seed and data. Seats already sold count toward each departure's target.
 */
export const generateBookings = (store: Store, spec: GenerateSpec) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorById(spec.vendorId)
    const rng = seededRng(spec.seed)
    const products = yield* loadGenProducts(store, vendor.id)
    const channels = yield* sql<{ id: number; class: ChannelClass; weight: number }>`
      SELECT id, class, weight FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id} ORDER BY id`
    const taken = new Map(
      (yield* sql<{ product_id: number; date: string; start_time_id: number; seats: number }>`
        SELECT product_id, date, start_time_id, sum(participants)::int AS seats FROM bokun_sandbox.product_bookings
        WHERE vendor_id = ${vendor.id} AND date BETWEEN ${spec.from} AND ${spec.to} AND status IN ('CONFIRMED', 'RESERVED')
        GROUP BY 1, 2, 3`).map((r) => [`${r.product_id}|${r.date}|${r.start_time_id}`, r.seats])
    )
    const capacities = new Map(
      (yield* sql<{ product_id: number; date: string; start_time_id: number; capacity: number }>`
        SELECT d.product_id, d.date, d.start_time_id, d.capacity FROM bokun_sandbox.departures d
        JOIN bokun_sandbox.products p ON p.id = d.product_id
        WHERE p.vendor_id = ${vendor.id} AND d.date BETWEEN ${spec.from} AND ${spec.to}`).map((r) => [
          `${r.product_id}|${r.date}|${r.start_time_id}`,
          r.capacity
        ])
    )
    const now = yield* Clock.currentTimeMillis
    const fullDays = new Set(spec.fullDays ?? [])
    const bookings: Array<Record<string, unknown>> = []
    const lines: Array<Record<string, unknown>> = []
    const pending: Array<{ booking: Record<string, unknown>; line: Record<string, unknown> }> = []

    for (const day of daysIn(spec.from, spec.to)) {
      for (const p of products) {
        for (const start of p.starts) {
          const key = `${p.id}|${day}|${start}`
          const capacity = capacities.get(key) ?? p.capacity ?? spec.unlimitedAs ?? 20
          const target = fullDays.has(day)
            ? capacity
            : Math.min(capacity, Math.round(capacity * (spec.fill ?? 0.6) * (0.5 + rng.next())))
          let seats = taken.get(key) ?? 0
          while (seats < target) {
            const party = Math.min(target - seats, rng.weighted([1, 2, 2, 2, 3, 4, 4, 5, 6], () => 1))
            const cancelled = rng.chance(spec.cancelledShare ?? 0.08)
            const channel = rng.weighted(channels, (c) => c.weight)
            const rate = rng.pick(p.rates)
            const adult = p.categories.find((c) => c.isDefault) ?? p.categories[0]!
            const others = p.categories.filter((c) => c !== adult && rate.prices.has(c.id))
            const minors = others.length > 0 && party > 1 && rng.chance(0.35) ? rng.int(1, party - 1) : 0
            const pax = [{ pricingCategoryId: adult.id, title: adult.title, quantity: party - minors }]
            if (minors > 0) {
              const other = rng.pick(others)
              pax.push({ pricingCategoryId: other.id, title: other.title, quantity: minors })
            }
            const total = p.pricedPerBooking
              ? rate.prices.get(adult.id) ?? 0
              : pax.reduce((sum, x) => sum + (rate.prices.get(x.pricingCategoryId) ?? 0) * x.quantity, 0)
            const first = rng.pick(FIRST_NAMES)
            const last = rng.pick(LAST_NAMES)
            const paid = channel.class === "direct"
              ? rng.weighted([total, Math.round(total * 0.3), 0], (x) => (x === total ? 6 : x === 0 ? 2 : 3))
              : total
            const departure = Date.parse(`${day}T12:00:00Z`)
            const created = new Date(Math.min(now, departure - rng.int(1, 45) * 86_400_000 - rng.int(0, 86_399) * 1000))
            const status = cancelled ? "CANCELLED" : "CONFIRMED"
            pending.push({
              booking: {
                vendor_id: vendor.id,
                external_reference: channel.class === "service"
                  ? `T-${Math.floor(rng.next() * 1e10).toString(36).toUpperCase()}`
                  : channel.class === "ota"
                  ? `${rng.int(100000000, 999999999)}`
                  : null,
                status,
                channel_id: channel.id,
                currency: vendor.currency,
                first_name: first,
                last_name: last,
                email: rng.chance(0.9) ? `${first}.${last}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, "") : null,
                phone: rng.chance(0.7) ? `+47${rng.int(40000000, 99999999)}` : null,
                paid_minor: paid,
                payment_status: channel.class === "ota" ? "INVOICED" : null,
                idempotency_key: null,
                hold_expires_at: null,
                note: cancelled ? "Cancelled by guest" : null,
                created_at: created,
                updated_at: created
              },
              line: {
                vendor_id: vendor.id,
                product_id: p.id,
                rate_id: rate.id,
                start_time_id: start,
                date: day,
                status,
                participants: party,
                pax: JSON.stringify(pax),
                pickup_place_id: p.pickups.length > 0 && rng.chance(0.5) ? rng.pick(p.pickups) : null,
                total_minor: total,
                updated_at: created
              }
            })
            if (!cancelled) seats += party
          }
        }
      }
    }
    if (pending.length === 0) return { bookings: 0, lines: 0 }
    const ids = yield* sql<{ id: number }>`
      SELECT nextval('bokun_sandbox.booking_ids')::bigint AS id FROM generate_series(1, ${pending.length * 2})`
    pending.forEach((entry, i) => {
      const bookingId = ids[2 * i]!.id
      bookings.push({ id: bookingId, confirmation_code: `${vendor.code_prefix}-${bookingId}`, ...entry.booking })
      lines.push({ id: ids[2 * i + 1]!.id, booking_id: bookingId, ...entry.line })
    })
    yield* sql.withTransaction(Effect.gen(function*() {
      for (let i = 0; i < bookings.length; i += 1000) {
        yield* sql`INSERT INTO bokun_sandbox.bookings ${sql.insert(bookings.slice(i, i + 1000))}`
        yield* sql`INSERT INTO bokun_sandbox.product_bookings ${sql.insert(lines.slice(i, i + 1000))}`
      }
    }))
    yield* store.changed
    return { bookings: bookings.length, lines: lines.length }
  }).pipe(Effect.withSpan("BokunSandbox.generateBookings"))

export interface BulkSpec {
  readonly vendorId: number
  /** Booking lines to write (one booking each). */
  readonly lines: number
  readonly from: string
  readonly to: string
  readonly seed: number
}

/**
 * Writes `lines` bookings of one line each over [from, to] in one set-based statement, ignoring
 * capacity: volume for the mirror benchmark. Deterministic in the seed (hashes of the row number).
 */
export const bulkBookings = (store: Store, spec: BulkSpec) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorById(spec.vendorId)
    const days = daysIn(spec.from, spec.to).length
    if (days === 0) return yield* badRequest("from is after to")
    const at = new Date(yield* Clock.currentTimeMillis)
    const seed = String(spec.seed)
    const [result] = yield* sql<{ n: number }>`
      WITH prods AS (
        SELECT p.id, row_number() OVER (ORDER BY p.id) - 1 AS idx,
          (SELECT array_agg(st.id ORDER BY st.time) FROM bokun_sandbox.start_times st WHERE st.product_id = p.id) AS starts,
          pr.rate_id, pr.pricing_category_id, pr.amount_minor, c.title AS category_title
        FROM bokun_sandbox.products p
        JOIN LATERAL (
          SELECT x.rate_id, x.pricing_category_id, x.amount_minor FROM bokun_sandbox.prices x
          JOIN bokun_sandbox.rates r ON r.id = x.rate_id
          JOIN bokun_sandbox.pricing_categories pc ON pc.id = x.pricing_category_id
          WHERE r.product_id = p.id ORDER BY r.position, r.id, pc.is_default DESC, pc.position LIMIT 1
        ) pr ON true
        JOIN bokun_sandbox.pricing_categories c ON c.id = pr.pricing_category_id
        WHERE p.vendor_id = ${vendor.id}
      ),
      chans AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS idx FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id}),
      counts AS (SELECT (SELECT count(*) FROM prods) AS products, (SELECT count(*) FROM chans) AS channels),
      gen AS (
        SELECT i,
          nextval('bokun_sandbox.booking_ids') AS booking_id,
          nextval('bokun_sandbox.booking_ids') AS line_id,
          abs(hashtext(${seed} || ':p:' || i)::bigint) AS hp,
          abs(hashtext(${seed} || ':d:' || i)::bigint) AS hd,
          abs(hashtext(${seed} || ':s:' || i)::bigint) AS hs,
          abs(hashtext(${seed} || ':q:' || i)::bigint) AS hq,
          abs(hashtext(${seed} || ':c:' || i)::bigint) AS hc,
          abs(hashtext(${seed} || ':n:' || i)::bigint) AS hn
        FROM generate_series(1, ${spec.lines}) i
      ),
      rows AS (
        SELECT g.*, p.id AS product_id, p.rate_id, p.pricing_category_id, p.category_title, p.amount_minor,
          p.starts[1 + (g.hs % array_length(p.starts, 1))] AS start_time_id,
          (${spec.from}::date + (g.hd % ${days})::int) AS date,
          1 + (g.hq % 4)::int AS party,
          CASE WHEN g.hc % 100 < 7 THEN 'CANCELLED' ELSE 'CONFIRMED' END AS status,
          ch.id AS channel_id,
          split_part(${FIRST_NAMES.join("|")}, '|', (1 + g.hn % ${FIRST_NAMES.length})::int) AS first_name,
          split_part(${LAST_NAMES.join("|")}, '|', (1 + (g.hn / 97) % ${LAST_NAMES.length})::int) AS last_name
        FROM gen g
        CROSS JOIN counts
        JOIN prods p ON p.idx = g.hp % counts.products
        JOIN chans ch ON ch.idx = (g.hc / 100) % counts.channels
      ),
      b AS (
        INSERT INTO bokun_sandbox.bookings (id, vendor_id, confirmation_code, status, channel_id, currency,
          first_name, last_name, email, paid_minor, created_at, updated_at)
        SELECT booking_id, ${vendor.id}, ${vendor.code_prefix} || '-' || booking_id, status, channel_id, ${vendor.currency},
          first_name, last_name, lower(first_name || '.' || last_name || '@example.com'), amount_minor * party,
          ${at}::timestamptz - ((hd % 60) || ' days')::interval, ${at}
        FROM rows
        RETURNING 1
      ),
      l AS (
      INSERT INTO bokun_sandbox.product_bookings (id, booking_id, vendor_id, product_id, rate_id, start_time_id, date,
        status, participants, pax, total_minor, updated_at)
      SELECT line_id, booking_id, ${vendor.id}, product_id, rate_id, start_time_id, date, status, party,
        jsonb_build_array(jsonb_build_object('pricingCategoryId', pricing_category_id, 'title', category_title, 'quantity', party)),
        amount_minor * party, ${at}
      FROM rows
      RETURNING 1
      )
      SELECT LEAST((SELECT count(*) FROM b), (SELECT count(*) FROM l))::int AS n`
    yield* store.changed
    return { lines: result?.n ?? 0 }
  }).pipe(Effect.withSpan("BokunSandbox.bulkBookings"))

// ------------------------------------------------------------------------------ the demo

const ADULT_PRICE: Readonly<Record<string, number>> = {
  NOK: 990, SEK: 990, DKK: 750, EUR: 89, USD: 99, GBP: 79, CHF: 95, ISK: 14900, JPY: 12000
}

/** Three day tours with start times, rates, adult/child prices and pickups, priced for the currency. */
export const demoProducts = (currency: string): ReadonlyArray<ProductSpec> => {
  const adult = ADULT_PRICE[currency] ?? 99
  const minor = (major: number) => Math.round(major * (currency === "ISK" || currency === "JPY" ? 1 : 100))
  const categories = [
    { title: "Adult", isDefault: true, minAge: 16 },
    { title: "Child", minAge: 4, maxAge: 15 }
  ]
  const prices = (factor: number) => ({ Adult: minor(adult * factor), Child: minor(adult * factor * 0.5) })
  return [
    {
      title: "Fjord & Waterfall Cruise",
      startTimes: ["09:00", "12:30", "16:00"],
      capacity: 40,
      durationMinutes: 180,
      pricingCategories: categories,
      rates: [{ title: "Standard", prices: prices(1) }, { title: "Lunch included", prices: prices(1.35) }],
      pickupPlaces: ["Harbour Hotel", "Central Station", "Old Town Square"],
      rating: { average: 4.7, count: 1284 }
    },
    {
      title: "Wildlife Safari by RIB",
      startTimes: ["10:00", "14:00"],
      capacity: 12,
      durationMinutes: 120,
      pricingCategories: categories,
      rates: [{ title: "Standard", prices: prices(1.6) }],
      rating: { average: 4.8, count: 532 }
    },
    {
      title: "Private Sunset Sail",
      startTimes: ["19:30"],
      capacity: 8,
      durationMinutes: 150,
      pricedPerBooking: true,
      supportsHolds: false,
      pricingCategories: [{ title: "Guest", isDefault: true }],
      rates: [{ title: "Whole boat", prices: { Guest: minor(adult * 9) } }],
      rating: null
    }
  ]
}

export interface DemoSpec {
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly seed?: number
  /** Days before today (local) with bookings. Default 7. */
  readonly daysBack?: number
  /** Days after today (local) with bookings. Default 30. */
  readonly daysAhead?: number
  /** Days from today (local) sold out. Default 4 (today and the next 3). */
  readonly fullDays?: number
  readonly accessKey?: string
  readonly secretKey?: string
}

/** A vendor with the demo products and bookings around today in its own time zone; today and the next days full. */
export const seedDemoVendor = (store: Store, spec: DemoSpec) =>
  Effect.gen(function*() {
    const vendor = yield* createVendor(store, {
      title: spec.title,
      timezone: spec.timezone,
      currency: spec.currency,
      ...(spec.accessKey ? { accessKey: spec.accessKey } : {}),
      ...(spec.secretKey ? { secretKey: spec.secretKey } : {}),
      products: demoProducts(spec.currency)
    })
    const today = localDay(yield* Clock.currentTimeMillis, spec.timezone)
    const full = Array.from({ length: spec.fullDays ?? 4 }, (_, i) => addDays(today, i))
    const generated = yield* generateBookings(store, {
      vendorId: vendor.id,
      from: addDays(today, -(spec.daysBack ?? 7)),
      to: addDays(today, spec.daysAhead ?? 30),
      seed: spec.seed ?? 42,
      fullDays: full
    })
    return { vendor, today, fullDays: full, ...generated }
  })

export type { VendorRow }
