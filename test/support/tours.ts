/**
 * Catalogue test data: sites, tours on them, content, translations and the season cache; tours
 * linked to Bókun sandbox products.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { type TourContent, writeTourContent } from "../../src/demo/tourContent.js"
import { Operators } from "../../src/operators/Operators.js"
import type { SandboxProduct, SandboxVendor } from "../../src/sandbox/bokun/index.js"

export const createSite = (ownerOperatorId: string, name = "Site") =>
  Effect.flatMap(
    Operators,
    (admin) =>
      admin.createSite({
        domain: `${name.toLowerCase().replace(/[^a-z]/g, "")}-${randomUUID().slice(0, 8)}.example`,
        name,
        ownerOperatorId
      })
  ).pipe(Effect.orDie)

export const addToSite = (siteId: string, operatorId: string) =>
  Effect.flatMap(Operators, (admin) => admin.addSiteOperator(siteId, operatorId)).pipe(Effect.orDie)

export interface TourSpec {
  readonly operatorId: string
  readonly title?: string
  readonly status?: "draft" | "published" | "archived"
  readonly slug?: string | null
  readonly timezone?: string
  readonly createdAt?: Date
  /** Sites that sell it; `site_owner` makes the site's owner the seller of record. */
  readonly sites?: ReadonlyArray<string | { readonly site: string; readonly soldBy: "operator" | "site_owner" }>
  readonly content?: TourContent
}

export const insertTour = (t: TourSpec) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO tours (operator_id, slug, title, status, timezone, currency, created_at)
      VALUES (${t.operatorId}, ${t.slug === undefined ? null : t.slug}, ${t.title ?? "Harbour Tour"},
        ${t.status ?? "published"}, ${t.timezone ?? "Europe/Oslo"}, 'NOK', ${t.createdAt ?? new Date()})
      RETURNING id`
    const id = row!.id
    for (const s of t.sites ?? []) {
      const { site, soldBy } = typeof s === "string" ? { site: s, soldBy: "operator" } : s
      yield* sql`INSERT INTO site_tours (site_id, tour_id, sold_by) VALUES (${site}, ${id}, ${soldBy})`
    }
    if (t.content) yield* writeTourContent(id, t.content)
    return id
  }).pipe(Effect.orDie)

export const setSeason = (tourId: string, s: {
  readonly fromPriceMinor: number | null
  readonly currency: string | null
  readonly known: boolean
  readonly nextAvailableDate: string | null
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO tour_season_cache (tour_id, from_price_minor, from_price_currency, known, next_available_date, computed_at)
      VALUES (${tourId}, ${s.fromPriceMinor}, ${s.currency}, ${s.known}, ${s.nextAvailableDate}, now())
      ON CONFLICT (tour_id) DO UPDATE SET from_price_minor = EXCLUDED.from_price_minor,
        from_price_currency = EXCLUDED.from_price_currency, known = EXCLUDED.known,
        next_available_date = EXCLUDED.next_available_date, computed_at = EXCLUDED.computed_at`).pipe(Effect.orDie)

/** Stores raw HTML on a tour (bypassing any writer), as a careless import could. */
export const storeRawHtml = (tourId: string, html: { description?: string; included?: string; excluded?: string }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      UPDATE tours SET description_html = ${html.description ?? ""}, included_html = ${html.included ?? ""},
        excluded_html = ${html.excluded ?? ""}
      WHERE id = ${tourId}`).pipe(Effect.orDie)

/** Links the operator to a booking-system account for this sandbox vendor; answers the account id. */
export const linkSandboxAccount = (operatorId: string, baseUrl: string, vendor: SandboxVendor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [account] = yield* sql<{ id: string }>`
      INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id, sandbox)
      VALUES ('bokun', ${vendor.title}, ${baseUrl}, ${vendor.accessKey}, ${vendor.secretKey}, ${
      String(vendor.serviceChannelId)
    }, true)
      RETURNING id`
    yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${operatorId}`
    return account!.id
  }).pipe(Effect.orDie)

/**
 * A tour linked to a sandbox product: its pricing categories and rates carry the product's ids (the
 * default category is the product's), as the catalogue of a linked tour does.
 */
export const insertLinkedTour = (t: TourSpec & { readonly product: SandboxProduct }) =>
  Effect.gen(function*() {
    const { product, ...spec } = t
    const id = yield* insertTour({
      ...spec,
      content: {
        pricingCategories: product.pricingCategories.map((c) => ({
          id: String(c.id),
          title: c.title,
          isDefault: c.isDefault
        })),
        rates: product.rates.map((r) => ({ id: String(r.id), title: r.title })),
        ...spec.content
      }
    })
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE tours SET booking_system_product_id = ${String(product.id)} WHERE id = ${id}`
    return id
  }).pipe(Effect.orDie)

/** The season cache row of a tour, if any. */
export const seasonRow = (tourId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        {
          from_price_minor: number | null
          from_price_currency: string | null
          known: boolean
          next_available_date: string | null
          computed_at: Date
        }
      >`
      SELECT from_price_minor, from_price_currency, known, next_available_date, computed_at
      FROM tour_season_cache WHERE tour_id = ${tourId}`
  ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)
