/** Catalogue test data: sites, tours on them, content, translations and the season cache. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { type TourContent, writeTourContent } from "../../src/demo/tourContent.js"
import { Admin } from "../../src/services/Admin.js"

export const createSite = (ownerOperatorId: string, name = "Site") =>
  Effect.flatMap(Admin, (admin) =>
    admin.createSite({ domain: `${name.toLowerCase().replace(/[^a-z]/g, "")}-${randomUUID().slice(0, 8)}.example`, name, ownerOperatorId })
  ).pipe(Effect.orDie)

export const addToSite = (siteId: string, operatorId: string) =>
  Effect.flatMap(Admin, (admin) => admin.addSiteOperator(siteId, operatorId)).pipe(Effect.orDie)

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
