/**
 * The SQL of the tour catalogue reads (Tours) for the sites a caller may see: the sites of a key's
 * operators, a page of the list, one tour, one tour's booking-system link. A database error is a
 * defect here, once.
 *
 * A site lists the tours in its `site_tours` that are published; a tour on several of the visible
 * sites is read once, as sold on one of them (a site its operator owns when there is one, else the
 * site whose domain sorts first). English content is on `tours`; a translation row for the locale
 * replaces the translated fields it holds.
 *
 * Hot reads: the list and the detail (GET /tours, GET /tours/{id}) keep plain `sql<Row>` typed rows,
 * not decoded by a Schema, and have no spans of their own (`repoEdge.untraced`: Tours.list's,
 * Tours.get's and the driver's cover them): both are measured against a bare floor by `npm run bench:tours`
 * (bench/README.md, "Issue 5").
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { toPgArray } from "../../db/sql.js"
import { type CursorPosition, microsToIso } from "../../http/cursor.js"

export interface CatalogueView {
  /** Sites whose catalogue the caller may read. Empty: nothing is visible. */
  readonly siteIds: ReadonlyArray<string>
  /** Normalised catalogue locale (`catalogueLocale`); `en` reads no translation. */
  readonly locale: string
}

/** What live availability needs of a tour: where its departures are, in which zone and currency. */
export const TourBookingLink = Schema.Struct({
  id: Schema.String,
  timezone: Schema.String,
  currency: Schema.String,
  /** The booking system's product; null when the tour is not linked to one. */
  productId: Schema.NullOr(Schema.String),
  /** The booking-system account of the tour's operator; null when it has none. */
  accountId: Schema.NullOr(Schema.String),
  /** The tour's default (adult) pricing category: the booking system's id where the tour is linked. */
  defaultCategoryId: Schema.NullOr(Schema.String)
})
export type TourBookingLink = typeof TourBookingLink.Type

export interface SummaryRow {
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

export interface DetailRow extends SummaryRow {
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

export class ToursRepo extends Effect.Service<ToursRepo>()("Partner/ToursRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The sites of these operators: those they own and those they were added to. */
    const sitesOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ id: Schema.String }),
      execute: (operatorIds) =>
        sql`
            SELECT id FROM sites WHERE owner_operator_id = ANY(${toPgArray(operatorIds)}::uuid[])
            UNION
            SELECT site_id FROM site_operators WHERE operator_id = ANY(${toPgArray(operatorIds)}::uuid[])`
    })

    /**
     * One visible published tour with the site it is shown for: host (site owner) and seller of
     * record. Of the visible sites selling it, a site its operator owns, else the domain that sorts
     * first (`listPage` applies the same rule to a page's tours).
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

    const summaryColumns = (locale: string) =>
      sql`
      t.id, t.slug, coalesce(tr.title, t.title) AS title, coalesce(tr.excerpt, t.excerpt) AS excerpt,
      ARRAY(SELECT p.url FROM tour_photos p WHERE p.tour_id = t.id ORDER BY p.position) AS photos,
      t.duration_minutes, t.priced_per_booking, t.languages, t.rating_average::float8 AS rating_average, t.rating_count,
      c.from_price_minor, c.from_price_currency, c.known AS season_known, c.next_available_date,
      t.operator_id, o.name AS operator_name, o.legal_name AS operator_legal_name, o.org_number AS operator_org_number,
      f.host_id, f.seller_id, sel.name AS seller_name, sel.legal_name AS seller_legal_name,
      sel.org_number AS seller_org_number,
      CASE WHEN tr.tour_id IS NULL THEN 'en' ELSE ${locale} END AS applied_locale,
      (extract(epoch FROM t.created_at) * 1000000)::bigint::text AS created_micros`

    const joins = (locale: string) =>
      sql`
      JOIN tours t ON t.id = f.tour_id
      JOIN operators o ON o.id = t.operator_id
      JOIN operators sel ON sel.id = f.seller_id
      LEFT JOIN tour_translations tr ON tr.tour_id = t.id AND tr.locale = ${locale}
      LEFT JOIN tour_season_cache c ON c.tour_id = t.id`

    /**
     * Up to `take` rows of a page of the list (a hot read: see above): the page's tour ids first
     * (keyset on created_at, id over the visible published tours, each tour once however many visible
     * sites sell it), then for those ids only the site it is shown as sold on (the rule of `offered`:
     * a site its operator owns first, else the domain that sorts first) and the content.
     * Deduplicating and joining the whole catalogue before paging cost a site's every tour on every page.
     */
    const listPage = (view: CatalogueView, take: number, after: CursorPosition | undefined) => {
      const clauses = [
        sql.literal(`t.status = 'published'`),
        sql`EXISTS (SELECT 1 FROM site_tours st WHERE st.tour_id = t.id AND st.site_id = ANY(${
          toPgArray(view.siteIds)
        }::uuid[]))`
      ]
      if (after) {
        clauses.push(sql`(t.created_at, t.id) > (${microsToIso(after.createdMicros)}::timestamptz, ${after.id}::uuid)`)
      }
      return sql<SummaryRow>`
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
        ORDER BY t.created_at, t.id`
    }

    /** One visible published tour with its content (a hot read: see above). */
    const findDetail = (id: string, view: CatalogueView) => {
      const locale = view.locale
      return Effect.map(
        sql<DetailRow>`
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
        ${joins(locale)}`,
        (rows) => Option.fromNullable(rows[0])
      )
    }

    /** A visible published tour's booking-system link. */
    const bookingLink = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, siteIds: Schema.Array(Schema.String) }),
      Result: TourBookingLink,
      execute: ({ id, siteIds }) =>
        sql`
            SELECT t.id, t.timezone, t.currency, t.booking_system_product_id AS "productId",
              o.booking_system_account_id AS "accountId",
              (SELECT pc.id FROM tour_pricing_categories pc WHERE pc.tour_id = t.id AND pc.is_default) AS "defaultCategoryId"
            FROM (${offered({ siteIds }, id)}) f
            JOIN tours t ON t.id = f.tour_id
            JOIN operators o ON o.id = t.operator_id`
    })

    return {
      ...repoEdge("ToursRepo", { sitesOf, bookingLink }),
      ...repoEdge.untraced({ listPage, findDetail })
    }
  })
}) {}
