/** Seeding vendors: each one a Bókun account with its keys, sales channels and products. */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { badRequest } from "./failure.js"
import type { Store } from "./store.js"

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
  readonly pricingCategories?: ReadonlyArray<
    { title: string; isDefault?: boolean; minAge?: number | null; maxAge?: number | null }
  >
  /** Prices in minor units by pricing category title. Default: one rate "Standard" at 50000 per category. */
  readonly rates?: ReadonlyArray<
    { title: string; description?: string | null; prices: Readonly<Record<string, number>> }
  >
  readonly pickupPlaces?: ReadonlyArray<string | { title: string; minutesBefore?: number }>
  readonly rating?: { average: number; count: number } | null
  /** Departs only between these days (inclusive; either may be left out). Default: every day. */
  readonly season?: { readonly from?: string; readonly to?: string }
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

export const createVendor = (store: Store, spec: VendorSpec) =>
  store.sql.withTransaction(Effect.gen(function*() {
    const { sql } = store
    const accessKey = spec.accessKey ?? randomBytes(16).toString("hex")
    const secretKey = spec.secretKey ?? randomBytes(16).toString("hex")
    const [vendor] = yield* sql<{ id: number }>`
      INSERT INTO bokun_sandbox.vendors ${
      sql.insert({
        title: spec.title,
        code_prefix: spec.codePrefix ?? initials(spec.title),
        access_key: accessKey,
        secret_key: secretKey,
        timezone: spec.timezone,
        currency: spec.currency,
        hold_seconds: spec.holdSeconds ?? 1800
      })
    } RETURNING id`
    const vendorId = vendor!.id
    const channelSpecs = spec.channels ?? DEFAULT_CHANNELS
    const withService = channelSpecs.some((c) => c.class === "service")
      ? channelSpecs.filter((c, i) =>
        c.class !== "service" || channelSpecs.findIndex((x) => x.class === "service") === i
      )
      : [DEFAULT_CHANNELS[0]!, ...channelSpecs]
    const channels = yield* sql<{ id: number; title: string; class: ChannelClass }>`
      INSERT INTO bokun_sandbox.channels ${
      sql.insert(withService.map((c) => ({
        vendor_id: vendorId,
        title: c.title,
        class: c.class,
        weight: c.weight ?? 1
      })))
    } RETURNING id, title, class`
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
      INSERT INTO bokun_sandbox.products ${
      sql.insert({
        vendor_id: vendorId,
        title: spec.title,
        timezone,
        currency: vendor.currency,
        duration_minutes: spec.durationMinutes ?? null,
        priced_per_booking: spec.pricedPerBooking ?? false,
        supports_holds: spec.supportsHolds ?? true,
        capacity: spec.capacity === undefined ? 20 : spec.capacity,
        rating_average: spec.rating?.average ?? null,
        rating_count: spec.rating?.count ?? null,
        season_from: spec.season?.from ?? null,
        season_to: spec.season?.to ?? null
      })
    } RETURNING id`
    const productId = row!.id
    if (spec.startTimes.length === 0) return yield* badRequest(`${spec.title}: a product needs a start time`)
    const startTimes = yield* sql<{ id: number; time: string }>`
      INSERT INTO bokun_sandbox.start_times ${
      sql.insert(spec.startTimes.map((time) => ({ product_id: productId, time })))
    }
      RETURNING id, time`
    const categorySpecs = spec.pricingCategories ?? [{ title: "Adult", isDefault: true }]
    const defaultIndex = Math.max(0, categorySpecs.findIndex((c) => c.isDefault))
    const categories = yield* sql<{ id: number; title: string; is_default: boolean }>`
      INSERT INTO bokun_sandbox.pricing_categories ${
      sql.insert(categorySpecs.map((c, i) => ({
        product_id: productId,
        title: c.title,
        is_default: i === defaultIndex,
        min_age: c.minAge ?? null,
        max_age: c.maxAge ?? null,
        position: i
      })))
    } RETURNING id, title, is_default`
    const rateSpecs = spec.rates ??
      [{ title: "Standard", prices: Object.fromEntries(categorySpecs.map((c) => [c.title, 50000])) }]
    const rates: Array<{ id: number; title: string }> = []
    for (const [i, r] of rateSpecs.entries()) {
      const [rate] = yield* sql<{ id: number; title: string }>`
        INSERT INTO bokun_sandbox.rates ${
        sql.insert({ product_id: productId, title: r.title, description: r.description ?? null, position: i })
      }
        RETURNING id, title`
      rates.push(rate!)
      const priced = categories.filter((c) => r.prices[c.title] !== undefined)
      if (priced.length === 0) return yield* badRequest(`${spec.title} / ${r.title}: no price for any pricing category`)
      yield* sql`INSERT INTO bokun_sandbox.prices ${
        sql.insert(priced.map((c) => ({
          rate_id: rate!.id,
          pricing_category_id: c.id,
          amount_minor: r.prices[c.title]!
        })))
      }`
    }
    const pickupSpecs = (spec.pickupPlaces ?? []).map((p) => (typeof p === "string" ? { title: p } : p))
    const pickupPlaces = pickupSpecs.length === 0 ? [] : yield* sql<{ id: number; title: string }>`
      INSERT INTO bokun_sandbox.pickup_places ${
      sql.insert(pickupSpecs.map((p) => ({
        product_id: productId,
        title: p.title,
        minutes_before: p.minutesBefore ?? 30
      })))
    } RETURNING id, title`
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

/**
 * Prices of one rate on some days that differ from the rate's own (a peak day, a season), by
 * pricing category id; every start time of those days gets them. A category left out keeps the
 * rate's price.
 */
export const setDayPrices = (
  store: Store,
  input: { rateId: number; dates: ReadonlyArray<string>; prices: Readonly<Record<string, number>> }
) =>
  Effect.gen(function*() {
    const rows = input.dates.flatMap((date) =>
      Object.entries(input.prices).map(([category, amount]) => ({
        rate_id: input.rateId,
        pricing_category_id: Number(category),
        date,
        amount_minor: amount
      }))
    )
    if (rows.length === 0) return
    yield* store.sql`
      INSERT INTO bokun_sandbox.day_prices ${store.sql.insert(rows)}
      ON CONFLICT (rate_id, pricing_category_id, date) DO UPDATE SET amount_minor = EXCLUDED.amount_minor`
    yield* store.changed
  })

/** The vendor with this access key as seeded earlier (a demo restarting on the same database), if any. */
export const findVendor = (store: Store, accessKey: string) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorByAccessKey(accessKey)
    if (!vendor) return undefined
    const channels = yield* sql<{ id: number; title: string; class: ChannelClass }>`
      SELECT id, title, class FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id} ORDER BY id`
    const products = yield* sql<
      {
        id: number
        title: string
        timezone: string
        currency: string
        capacity: number | null
        supports_holds: boolean
      }
    >`
      SELECT id, title, timezone, currency, capacity, supports_holds FROM bokun_sandbox.products WHERE vendor_id = ${vendor.id} ORDER BY id`
    const ids = products.map((p) => p.id)
    const [startTimes, rates, categories, pickups] = ids.length === 0 ? [[], [], [], []] : yield* Effect.all([
      sql<{ id: number; product_id: number; time: string }>`
        SELECT id, product_id, time FROM bokun_sandbox.start_times WHERE product_id IN ${sql.in(ids)} ORDER BY time`,
      sql<{ id: number; product_id: number; title: string }>`
        SELECT id, product_id, title FROM bokun_sandbox.rates WHERE product_id IN ${sql.in(ids)} ORDER BY position, id`,
      sql<{ id: number; product_id: number; title: string; is_default: boolean }>`
        SELECT id, product_id, title, is_default FROM bokun_sandbox.pricing_categories WHERE product_id IN ${
        sql.in(ids)
      } ORDER BY position, id`,
      sql<{ id: number; product_id: number; title: string }>`
        SELECT id, product_id, title FROM bokun_sandbox.pickup_places WHERE product_id IN ${sql.in(ids)} ORDER BY id`
    ])
    const of = <A extends { product_id: number }>(rows: ReadonlyArray<A>, productId: number) =>
      rows.filter((r) => r.product_id === productId)
    const found: SandboxVendor = {
      id: vendor.id,
      title: vendor.title,
      accessKey: vendor.access_key,
      secretKey: vendor.secret_key,
      timezone: vendor.timezone,
      currency: vendor.currency,
      serviceChannelId: channels.find((c) => c.class === "service")!.id,
      channels,
      products: products.map((p) => ({
        id: p.id,
        title: p.title,
        timezone: p.timezone,
        currency: p.currency,
        capacity: p.capacity,
        supportsHolds: p.supports_holds,
        startTimes: of(startTimes, p.id).map((s) => ({ id: s.id, time: s.time })),
        rates: of(rates, p.id).map((r) => ({ id: r.id, title: r.title })),
        pricingCategories: of(categories, p.id).map((c) => ({ id: c.id, title: c.title, isDefault: c.is_default })),
        pickupPlaces: of(pickups, p.id).map((x) => ({ id: x.id, title: x.title }))
      }))
    }
    return found
  })
