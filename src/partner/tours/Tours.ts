/**
 * Reads of the tour catalogue for the sites a caller may see.
 *
 * Callers say which sites they may read (`CatalogueView.siteIds`): a secret key passes the sites of
 * its operators (`sitesOf`), a publishable key will pass its own site. A site lists the tours in its
 * `site_tours` that are published: its owner's own and those it resells for other operators. A tour
 * on several of the visible sites is shown once, as sold on one of them: a site its operator owns
 * when there is one, else the site whose domain sorts first; `operator.is_host` and `seller` are
 * those of that site.
 *
 * Order is oldest first by (tours.created_at, id), keyset paged: a tour never changes place.
 * English content is on `tours`; a translation row for the requested locale replaces the translated
 * fields it holds (`locale` in the answer says whether it applied). Rich text is cleaned on every
 * read (src/catalogue/tourHtml.ts), whatever wrote it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CursorPosition } from "../../http/cursor.js"
import { notYours } from "../../domain/errors.js"
import {
  DIFFICULTIES,
  departureTimes,
  roles,
  type TourDetail,
  type TourSummary
} from "./tour.js"
import { cleanTourHtml } from "../../catalogue/tourHtml.js"
import { microsToIso } from "../../http/cursor.js"
import { toPgArray } from "../../db/pgArray.js"

export interface CatalogueView {
  /** Sites whose catalogue the caller may read. Empty: nothing is visible. */
  readonly siteIds: ReadonlyArray<string>
  /** Normalised catalogue locale (`catalogueLocale`); `en` reads no translation. */
  readonly locale: string
}

/** What live availability needs of a tour: where its departures are, in which zone and currency. */
export interface TourBookingLink {
  readonly id: string
  readonly timezone: string
  readonly currency: string
  /** The booking system's product; null when the tour is not linked to one. */
  readonly productId: string | null
  /** The booking-system account of the tour's operator; null when it has none. */
  readonly accountId: string | null
  /** The tour's default (adult) pricing category: the booking system's id where the tour is linked. */
  readonly defaultCategoryId: string | null
}

export interface TourListPage {
  readonly rows: ReadonlyArray<TourSummary>
  /** Position of the last row when more rows follow. */
  readonly next: CursorPosition | undefined
}

interface SummaryRow {
  readonly id: string
  readonly slug: string | null
  readonly title: string
  readonly excerpt: string | null
  readonly photos: ReadonlyArray<string>
  readonly duration_minutes: number | null
  readonly priced_per_booking: boolean
  readonly languages: ReadonlyArray<string>
  readonly rating_average: number | null
  readonly rating_count: number | null
  readonly from_price_minor: number | null
  readonly from_price_currency: string | null
  readonly season_known: boolean | null
  readonly next_available_date: string | null
  readonly operator_id: string
  readonly operator_name: string
  readonly operator_legal_name: string | null
  readonly operator_org_number: string | null
  readonly host_id: string
  readonly seller_id: string
  readonly seller_name: string
  readonly seller_legal_name: string | null
  readonly seller_org_number: string | null
  readonly applied_locale: string
  readonly created_micros: string
}

interface DetailRow extends SummaryRow {
  readonly timezone: string
  readonly description_html: string
  readonly included_html: string
  readonly excluded_html: string
  readonly inclusions: ReadonlyArray<string>
  readonly exclusions: ReadonlyArray<string>
  readonly highlights: ReadonlyArray<string>
  readonly know_before: ReadonlyArray<string>
  readonly meeting_point_name: string | null
  readonly meeting_point_address: string | null
  readonly meeting_point_lat: number | null
  readonly meeting_point_lng: number | null
  readonly cancellation_title: string | null
  readonly cancellation_free_hours: number | null
  readonly min_age: number | null
  readonly difficulty: string | null
  readonly departure_times: ReadonlyArray<string>
  readonly pricing_categories: ReadonlyArray<{
    id: string
    is_default: boolean
    title: string
    min_age: number | null
    max_age: number | null
  }>
  readonly rates: ReadonlyArray<{ id: string; title: string; description: string | null }>
  readonly linked_products: ReadonlyArray<{ label: string; language: string | null; tour_id: string | null }>
}

/** A catalogue row as the API shows it in lists (pure). */
export const toTourSummary = (row: SummaryRow): TourSummary => ({
  id: row.id,
  slug: row.slug,
  title: row.title,
  excerpt: row.excerpt,
  photos: row.photos,
  duration_minutes: row.duration_minutes,
  priced_per_booking: row.priced_per_booking,
  languages: row.languages,
  from_price: row.from_price_minor === null || row.from_price_currency === null
    ? null
    : { amount_minor: row.from_price_minor, currency: row.from_price_currency },
  // No computed row yet reads as not known, never as closed.
  season: row.season_known === true
    ? { known: true, next_available_date: row.next_available_date }
    : { known: false, next_available_date: null },
  rating: row.rating_average === null || row.rating_count === null
    ? null
    : { average: row.rating_average, count: row.rating_count },
  operator: {
    name: row.operator_name,
    legal_name: row.operator_legal_name,
    org_number: row.operator_org_number,
    ...roles({ operatorId: row.operator_id, hostId: row.host_id, sellerId: row.seller_id })
  },
  seller: { name: row.seller_name, legal_name: row.seller_legal_name, org_number: row.seller_org_number },
  locale: row.applied_locale
})

const isDifficulty = (s: string | null): s is (typeof DIFFICULTIES)[number] =>
  s !== null && (DIFFICULTIES as ReadonlyArray<string>).includes(s)

export const toTourDetail = (row: DetailRow): TourDetail => ({
  ...toTourSummary(row),
  timezone: row.timezone,
  description_html: cleanTourHtml(row.description_html),
  included_html: cleanTourHtml(row.included_html),
  excluded_html: cleanTourHtml(row.excluded_html),
  inclusions: row.inclusions,
  exclusions: row.exclusions,
  highlights: row.highlights,
  know_before: row.know_before,
  meeting_point: row.meeting_point_name === null ? null : {
    name: row.meeting_point_name,
    address: row.meeting_point_address,
    lat: row.meeting_point_lat,
    lng: row.meeting_point_lng
  },
  cancellation: { title: row.cancellation_title, free_hours: row.cancellation_free_hours },
  min_age: row.min_age,
  difficulty: isDifficulty(row.difficulty) ? row.difficulty : null,
  departure_times: departureTimes(row.departure_times),
  pricing_categories: row.pricing_categories,
  rates: row.rates,
  linked_products: row.linked_products,
  checkout: { activity_id: row.id }
})

export class Tours extends Effect.Service<Tours>()("Partner/Tours", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The sites of these operators: those they own and those they were added to. */
    const sitesOf = Effect.fn("Tours.sitesOf")((operatorIds: ReadonlyArray<string>) =>
      sql<{ id: string }>`
        SELECT id FROM sites WHERE owner_operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
        UNION
        SELECT site_id FROM site_operators WHERE operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows.map((r) => r.id).sort())
      ))

    /**
     * One visible published tour with the site it is shown for: host (site owner) and seller of
     * record. Of the visible sites selling it, a site its operator owns, else the domain that sorts
     * first (`list` applies the same rule to a page's tours).
     */
    const offered = (view: Pick<CatalogueView, "siteIds">, id: string) =>
      sql`
        SELECT DISTINCT ON (t.id) t.id AS tour_id, s.owner_operator_id AS host_id,
          CASE st.sold_by WHEN 'site_owner' THEN s.owner_operator_id ELSE t.operator_id END AS seller_id
        FROM site_tours st
        JOIN sites s ON s.id = st.site_id
        JOIN tours t ON t.id = st.tour_id
        WHERE ${
        sql.and([
          sql`st.site_id = ANY(${toPgArray(view.siteIds)}::uuid[])`,
          sql.literal(`t.status = 'published'`),
          sql`t.id = ${id}::uuid`
        ])
      }
        ORDER BY t.id, (s.owner_operator_id = t.operator_id) DESC, s.domain`

    const summaryColumns = (locale: string) => sql`
      t.id, t.slug, coalesce(tr.title, t.title) AS title, coalesce(tr.excerpt, t.excerpt) AS excerpt,
      ARRAY(SELECT p.url FROM tour_photos p WHERE p.tour_id = t.id ORDER BY p.position) AS photos,
      t.duration_minutes, t.priced_per_booking, t.languages, t.rating_average::float8 AS rating_average, t.rating_count,
      c.from_price_minor, c.from_price_currency, c.known AS season_known, c.next_available_date,
      t.operator_id, o.name AS operator_name, o.legal_name AS operator_legal_name, o.org_number AS operator_org_number,
      f.host_id, f.seller_id, sel.name AS seller_name, sel.legal_name AS seller_legal_name,
      sel.org_number AS seller_org_number,
      CASE WHEN tr.tour_id IS NULL THEN 'en' ELSE ${locale} END AS applied_locale,
      (extract(epoch FROM t.created_at) * 1000000)::bigint::text AS created_micros`

    const joins = (locale: string) => sql`
      JOIN tours t ON t.id = f.tour_id
      JOIN operators o ON o.id = t.operator_id
      JOIN operators sel ON sel.id = f.seller_id
      LEFT JOIN tour_translations tr ON tr.tour_id = t.id AND tr.locale = ${locale}
      LEFT JOIN tour_season_cache c ON c.tour_id = t.id`

    /**
     * One page of the list: the page's tour ids first (keyset on created_at, id over the visible
     * published tours, each tour once however many visible sites sell it), then for those ids only
     * the site it is shown as sold on (the rule of `offered`: a site its operator owns first, else
     * the domain that sorts first) and the content. Deduplicating and joining the whole catalogue
     * before paging cost a site's every tour on every page.
     */
    const list = Effect.fn("Tours.list")(function*(
      view: CatalogueView,
      page: { readonly limit: number; readonly after?: CursorPosition | undefined }
    ) {
      if (view.siteIds.length === 0) return { rows: [], next: undefined } satisfies TourListPage
      const take = page.limit + 1
      const clauses = [
        sql.literal(`t.status = 'published'`),
        sql`EXISTS (SELECT 1 FROM site_tours st WHERE st.tour_id = t.id AND st.site_id = ANY(${toPgArray(view.siteIds)}::uuid[]))`
      ]
      if (page.after) {
        clauses.push(sql`(t.created_at, t.id) > (${microsToIso(page.after.createdMicros)}::timestamptz, ${page.after.id}::uuid)`)
      }
      const rows = yield* sql<SummaryRow>`
        SELECT ${summaryColumns(view.locale)}
        FROM (
          SELECT t.id, t.operator_id, t.created_at FROM tours t
          WHERE ${sql.and(clauses)}
          ORDER BY t.created_at, t.id
          LIMIT ${take}
        ) pt
        CROSS JOIN LATERAL (
          SELECT st.tour_id, s.owner_operator_id AS host_id,
            CASE st.sold_by WHEN 'site_owner' THEN s.owner_operator_id ELSE pt.operator_id END AS seller_id
          FROM site_tours st
          JOIN sites s ON s.id = st.site_id
          WHERE st.tour_id = pt.id AND st.site_id = ANY(${toPgArray(view.siteIds)}::uuid[])
          ORDER BY (s.owner_operator_id = pt.operator_id) DESC, s.domain
          LIMIT 1
        ) f
        ${joins(view.locale)}
        ORDER BY t.created_at, t.id`.pipe(Effect.orDie)
      const shown = rows.slice(0, page.limit)
      const last = shown[shown.length - 1]
      return {
        rows: shown.map(toTourSummary),
        next: rows.length > page.limit && last ? { createdMicros: last.created_micros, id: last.id } : undefined
      } satisfies TourListPage
    })

    const get = Effect.fn("Tours.get")(function*(id: string, view: CatalogueView) {
      if (view.siteIds.length === 0) return yield* Effect.fail(notYours("tour"))
      const locale = view.locale
      const [row] = yield* sql<DetailRow>`
        SELECT ${summaryColumns(locale)}, t.timezone,
          coalesce(tr.description_html, t.description_html) AS description_html,
          coalesce(tr.included_html, t.included_html) AS included_html,
          coalesce(tr.excluded_html, t.excluded_html) AS excluded_html,
          coalesce(tr.inclusions, t.inclusions) AS inclusions,
          coalesce(tr.exclusions, t.exclusions) AS exclusions,
          coalesce(tr.highlights, t.highlights) AS highlights,
          coalesce(tr.know_before, t.know_before) AS know_before,
          CASE WHEN t.meeting_point_name IS NULL THEN NULL
            ELSE coalesce(tr.meeting_point_name, t.meeting_point_name) END AS meeting_point_name,
          t.meeting_point_address, t.meeting_point_lat, t.meeting_point_lng,
          coalesce(tr.cancellation_title, t.cancellation_title) AS cancellation_title,
          t.cancellation_free_hours, t.min_age, t.difficulty, t.departure_times,
          (SELECT coalesce(json_agg(json_build_object(
              'id', pc.id, 'is_default', pc.is_default, 'title', coalesce(pct.title, pc.title),
              'min_age', pc.min_age, 'max_age', pc.max_age) ORDER BY pc.position, pc.id), '[]')
            FROM tour_pricing_categories pc
            LEFT JOIN tour_pricing_category_translations pct
              ON pct.tour_id = pc.tour_id AND pct.category_id = pc.id AND pct.locale = tr.locale
            WHERE pc.tour_id = t.id) AS pricing_categories,
          (SELECT coalesce(json_agg(json_build_object(
              'id', r.id, 'title', coalesce(rt.title, r.title), 'description', coalesce(rt.description, r.description))
              ORDER BY r.position, r.id), '[]')
            FROM tour_rates r
            LEFT JOIN tour_rate_translations rt ON rt.tour_id = r.tour_id AND rt.rate_id = r.id AND rt.locale = tr.locale
            WHERE r.tour_id = t.id) AS rates,
          (SELECT coalesce(json_agg(json_build_object(
              'label', l.label, 'language', l.language,
              'tour_id', CASE WHEN EXISTS (
                SELECT 1 FROM site_tours lst JOIN tours lt ON lt.id = lst.tour_id
                WHERE lst.tour_id = l.linked_tour_id AND lt.status = 'published'
                  AND lst.site_id = ANY(${toPgArray(view.siteIds)}::uuid[])
              ) THEN l.linked_tour_id END) ORDER BY l.position), '[]')
            FROM tour_linked_products l WHERE l.tour_id = t.id) AS linked_products
        FROM (${offered(view, id)}) f
        ${joins(locale)}`.pipe(Effect.orDie)
      if (!row) return yield* Effect.fail(notYours("tour"))
      return toTourDetail(row)
    })

    /** A visible published tour's booking-system link (same visibility rule as `get`: 404 otherwise). */
    const bookingLink = Effect.fn("Tours.bookingLink")(function*(id: string, view: Pick<CatalogueView, "siteIds">) {
      if (view.siteIds.length === 0) return yield* Effect.fail(notYours("tour"))
      const [row] = yield* sql<TourBookingLink>`
        SELECT t.id, t.timezone, t.currency, t.booking_system_product_id AS "productId",
          o.booking_system_account_id AS "accountId",
          (SELECT pc.id FROM tour_pricing_categories pc WHERE pc.tour_id = t.id AND pc.is_default) AS "defaultCategoryId"
        FROM (${offered(view, id)}) f
        JOIN tours t ON t.id = f.tour_id
        JOIN operators o ON o.id = t.operator_id`.pipe(Effect.orDie)
      if (!row) return yield* Effect.fail(notYours("tour"))
      return row
    })

    return { sitesOf, list, get, bookingLink } as const
  })
}) {}
