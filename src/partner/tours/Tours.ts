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
 * read (src/catalogue/tourHtml.ts), whatever wrote it. SQL: ToursRepo.
 */
import { Effect, Option } from "effect"
import { cleanTourHtml } from "../../catalogue/tourHtml.js"
import { notYours } from "../../domain/errors.js"
import type { CursorPosition } from "../../http/cursor.js"
import { departureTimes, DIFFICULTIES, roles, type TourDetail, type TourSummary } from "./tour.js"
import { type CatalogueView, type DetailRow, type SummaryRow, ToursRepo } from "./ToursRepo.js"

export type { CatalogueView, TourBookingLink } from "./ToursRepo.js"

export interface TourListPage {
  readonly rows: ReadonlyArray<TourSummary>
  /** Position of the last row when more rows follow. */
  readonly next: CursorPosition | undefined
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
    const repo = yield* ToursRepo

    /** The sites of these operators: those they own and those they were added to. */
    const sitesOf = Effect.fn("Tours.sitesOf")(function*(operatorIds: ReadonlyArray<string>) {
      const rows = yield* repo.sitesOf(operatorIds)
      return rows.map((r) => r.id).sort()
    })

    /** A page of the list, keyset on (created_at, id), each tour once however many visible sites sell it. */
    const list = Effect.fn("Tours.list")(function*(
      view: CatalogueView,
      page: { readonly limit: number; readonly after?: CursorPosition | undefined }
    ) {
      if (view.siteIds.length === 0) return { rows: [], next: undefined } satisfies TourListPage
      const rows = yield* repo.listPage(view, page.limit + 1, page.after)
      const shown = rows.slice(0, page.limit)
      const last = shown[shown.length - 1]
      return {
        rows: shown.map(toTourSummary),
        next: rows.length > page.limit && last ? { createdMicros: last.created_micros, id: last.id } : undefined
      } satisfies TourListPage
    })

    const get = Effect.fn("Tours.get")(function*(id: string, view: CatalogueView) {
      if (view.siteIds.length === 0) return yield* Effect.fail(notYours("tour"))
      const row = yield* repo.findDetail(id, view)
      if (Option.isNone(row)) return yield* Effect.fail(notYours("tour"))
      return toTourDetail(row.value)
    })

    /** A visible published tour's booking-system link (same visibility rule as `get`: 404 otherwise). */
    const bookingLink = Effect.fn("Tours.bookingLink")(function*(id: string, view: Pick<CatalogueView, "siteIds">) {
      if (view.siteIds.length === 0) return yield* Effect.fail(notYours("tour"))
      const link = yield* repo.bookingLink({ id, siteIds: view.siteIds })
      if (Option.isNone(link)) return yield* Effect.fail(notYours("tour"))
      return link.value
    })

    return { sitesOf, list, get, bookingLink } as const
  }),
  dependencies: [ToursRepo.Default]
}) {}
