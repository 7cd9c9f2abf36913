/** The sandbox's catalogue: vendors (Bókun accounts), products with rates, prices, start times and pickups. */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type * as Dialect from "../../adapters/bokun/dialect.js"
import { notFound } from "./failure.js"

export interface VendorRow {
  readonly id: number
  readonly title: string
  readonly code_prefix: string
  readonly access_key: string
  readonly secret_key: string
  readonly timezone: string
  readonly currency: string
  readonly hold_seconds: number
}

export interface ProductRow {
  readonly id: number
  readonly vendor_id: number
  readonly title: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly priced_per_booking: boolean
  readonly supports_holds: boolean
  readonly capacity: number | null
  readonly rating_average: number | null
  readonly rating_count: number | null
  /** Departs only from this day (null: open). */
  readonly season_from: string | null
  /** Departs only up to this day (null: open). */
  readonly season_to: string | null
}

export interface PriceRow {
  readonly rate_id: number
  readonly rate_title: string
  readonly category_id: number
  readonly category_title: string
  readonly is_default: boolean
  readonly amount_minor: number
}

export const makeCatalogue = (sql: SqlClient.SqlClient) => {
  const vendorByAccessKey = (accessKey: string) =>
    sql<VendorRow>`SELECT * FROM bokun_sandbox.vendors WHERE access_key = ${accessKey}`.pipe(
      Effect.map((rows) => rows[0])
    )

  const vendorById = (id: number) =>
    sql<VendorRow>`SELECT * FROM bokun_sandbox.vendors WHERE id = ${id}`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Vendor ${id}`))))
    )

  const product = (vendorId: number, productId: number) =>
    sql<ProductRow>`
      SELECT * FROM bokun_sandbox.products WHERE id = ${productId} AND vendor_id = ${vendorId}`.pipe(
      Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Activity ${productId}`))))
    )

  /** The product's prices per rate and category; with `date`, that day's (a day price wins over the rate's). */
  const prices = (productId: number, date: string | null = null) =>
    sql<PriceRow>`
      SELECT r.id AS rate_id, r.title AS rate_title, c.id AS category_id, c.title AS category_title,
        c.is_default, COALESCE(dp.amount_minor, p.amount_minor) AS amount_minor
      FROM bokun_sandbox.rates r
      JOIN bokun_sandbox.prices p ON p.rate_id = r.id
      JOIN bokun_sandbox.pricing_categories c ON c.id = p.pricing_category_id
      LEFT JOIN bokun_sandbox.day_prices dp
        ON dp.rate_id = r.id AND dp.pricing_category_id = c.id AND dp.date = ${date}::date
      WHERE r.product_id = ${productId}
      ORDER BY r.position, r.id, c.position, c.id`

  /** Day prices of the product between two days: what differs from the rates' prices. */
  const dayPrices = (productId: number, from: string, to: string) =>
    sql<{ rate_id: number; category_id: number; date: string; amount_minor: number }>`
      SELECT dp.rate_id, dp.pricing_category_id AS category_id, dp.date, dp.amount_minor
      FROM bokun_sandbox.day_prices dp
      JOIN bokun_sandbox.rates r ON r.id = dp.rate_id
      WHERE r.product_id = ${productId} AND dp.date BETWEEN ${from}::date AND ${to}::date`

  /** Whether the product departs on `day` (inside its season, if it has one). */
  const inSeason = (p: Pick<ProductRow, "season_from" | "season_to">, day: string) =>
    (p.season_from === null || day >= p.season_from) && (p.season_to === null || day <= p.season_to)

  const activity = (vendorId: number, productId: number) =>
    Effect.gen(function*() {
      const p = yield* product(vendorId, productId)
      const vendor = yield* vendorById(vendorId)
      const [rates, categories, startTimes] = yield* Effect.all([
        sql<{ id: number; title: string; description: string | null }>`
          SELECT id, title, description FROM bokun_sandbox.rates WHERE product_id = ${p.id} ORDER BY position, id`,
        sql<{ id: number; title: string; is_default: boolean; min_age: number | null; max_age: number | null }>`
          SELECT id, title, is_default, min_age, max_age FROM bokun_sandbox.pricing_categories
          WHERE product_id = ${p.id} ORDER BY position, id`,
        sql<
          { id: number; time: string }
        >`SELECT id, time FROM bokun_sandbox.start_times WHERE product_id = ${p.id} ORDER BY time`
      ])
      const body: typeof Dialect.Activity.Encoded = {
        id: p.id,
        title: p.title,
        timeZone: p.timezone,
        durationMinutes: p.duration_minutes,
        vendor: { id: vendor.id, title: vendor.title, currencyCode: p.currency, timeZone: vendor.timezone },
        rates: rates.map((r) => ({
          id: r.id,
          title: r.title,
          description: r.description,
          pricedPerPerson: !p.priced_per_booking
        })),
        pricingCategories: categories.map((c) => ({
          id: c.id,
          title: c.title,
          ticketCategory: c.is_default ? "ADULT" : c.max_age !== null && c.max_age < 18 ? "CHILD" : "OTHER",
          defaultCategory: c.is_default,
          minAge: c.min_age,
          maxAge: c.max_age
        })),
        startTimes: startTimes.map((s) => ({
          id: s.id,
          hour: Number(s.time.slice(0, 2)),
          minute: Number(s.time.slice(3))
        })),
        reviewRating: p.rating_average,
        reviewCount: p.rating_count,
        reservationsAllowed: p.supports_holds
      }
      return body
    })

  const pickupPlaces = (vendorId: number, productId: number) =>
    Effect.zipRight(
      product(vendorId, productId),
      sql<{ id: number; title: string }>`
        SELECT id, title FROM bokun_sandbox.pickup_places WHERE product_id = ${productId} ORDER BY title, id`
    ).pipe(
      Effect.map((rows): typeof Dialect.PickupPlaces.Encoded => ({
        pickupPlaces: rows.map((r) => ({ id: r.id, title: r.title }))
      }))
    )

  const activitySearch = (vendorId: number, page: number, pageSize: number) =>
    Effect.gen(function*() {
      const size = Math.min(Math.max(1, pageSize), 1000)
      const [count] = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM bokun_sandbox.products WHERE vendor_id = ${vendorId}`
      const items = yield* sql<{ id: number; title: string }>`
        SELECT id, title FROM bokun_sandbox.products WHERE vendor_id = ${vendorId}
        ORDER BY id LIMIT ${size} OFFSET ${(Math.max(1, page) - 1) * size}`
      const body: typeof Dialect.ActivitySearchResult.Encoded = {
        totalHits: count!.n,
        items: items.map((i) => ({ id: i.id, title: i.title }))
      }
      return body
    })
  return { vendorByAccessKey, vendorById, product, prices, dayPrices, inSeason, activity, pickupPlaces, activitySearch }
}

export type Catalogue = ReturnType<typeof makeCatalogue>
