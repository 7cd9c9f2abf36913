/**
 * Writes a tour's catalogue content (migration 0012): the English fields on `tours`, photos, pricing
 * categories, rates, linked products and translations. Replaces what the tour had. Used by the demo
 * seed and the tests; HTML is stored as given, since every read cleans it (src/catalogue/tourHtml.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The long texts of a tour, in English on the tour and again in each translation. */
export interface TourTexts {
  readonly descriptionHtml?: string
  readonly includedHtml?: string
  readonly excludedHtml?: string
  readonly inclusions?: ReadonlyArray<string>
  readonly exclusions?: ReadonlyArray<string>
  readonly highlights?: ReadonlyArray<string>
  readonly knowBefore?: ReadonlyArray<string>
}

export interface TourTranslation extends TourTexts {
  readonly title: string
  readonly excerpt?: string
  readonly meetingPointName?: string
  readonly cancellationTitle?: string
  /** Pricing-category id → translated title. */
  readonly pricingCategories?: Readonly<Record<string, string>>
  /** Rate id → translated title and description. */
  readonly rates?: Readonly<Record<string, { readonly title: string; readonly description?: string | null }>>
}

export interface TourContent extends TourTexts {
  readonly excerpt?: string | null
  readonly durationMinutes?: number | null
  readonly pricedPerBooking?: boolean
  readonly languages?: ReadonlyArray<string>
  readonly rating?: { readonly average: number; readonly count: number } | null
  readonly meetingPoint?: {
    readonly name: string
    readonly address?: string | null
    readonly lat?: number | null
    readonly lng?: number | null
  } | null
  readonly cancellation?: { readonly title?: string | null; readonly freeHours?: number | null }
  readonly minAge?: number | null
  readonly difficulty?: string | null
  readonly departureTimes?: ReadonlyArray<string>
  /** URLs, cover first. */
  readonly photos?: ReadonlyArray<string>
  readonly pricingCategories?: ReadonlyArray<{
    readonly id: string
    readonly title: string
    readonly isDefault?: boolean
    readonly minAge?: number | null
    readonly maxAge?: number | null
  }>
  readonly rates?: ReadonlyArray<{ readonly id: string; readonly title: string; readonly description?: string | null }>
  readonly linkedProducts?: ReadonlyArray<
    { readonly label: string; readonly language?: string | null; readonly tourId?: string | null }
  >
  /** Locale (ISO 639-1, not en) → translation. */
  readonly translations?: Readonly<Record<string, TourTranslation>>
}

/** A PostgreSQL text[] parameter (JSON array decoded server-side, so any text is safe). */
const textArray = (sql: SqlClient.SqlClient, items: ReadonlyArray<string> | undefined) =>
  sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(items ?? [])}::jsonb))`

const textArrayOrNull = (sql: SqlClient.SqlClient, items: ReadonlyArray<string> | undefined) =>
  items === undefined ? sql`NULL::text[]` : textArray(sql, items)

export const writeTourContent = (tourId: string, c: TourContent) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      UPDATE tours SET
        excerpt = ${c.excerpt ?? null},
        duration_minutes = ${c.durationMinutes ?? null},
        priced_per_booking = ${c.pricedPerBooking ?? false},
        languages = ${textArray(sql, c.languages)},
        rating_average = ${c.rating?.average ?? null},
        rating_count = ${c.rating?.count ?? null},
        meeting_point_name = ${c.meetingPoint?.name ?? null},
        meeting_point_address = ${c.meetingPoint?.address ?? null},
        meeting_point_lat = ${c.meetingPoint?.lat ?? null},
        meeting_point_lng = ${c.meetingPoint?.lng ?? null},
        cancellation_title = ${c.cancellation?.title ?? null},
        cancellation_free_hours = ${c.cancellation?.freeHours ?? null},
        min_age = ${c.minAge ?? null},
        difficulty = ${c.difficulty ?? null},
        departure_times = ${textArray(sql, c.departureTimes)},
        description_html = ${c.descriptionHtml ?? ""},
        included_html = ${c.includedHtml ?? ""},
        excluded_html = ${c.excludedHtml ?? ""},
        inclusions = ${textArray(sql, c.inclusions)},
        exclusions = ${textArray(sql, c.exclusions)},
        highlights = ${textArray(sql, c.highlights)},
        know_before = ${textArray(sql, c.knowBefore)},
        updated_at = now()
      WHERE id = ${tourId}`
    for (
      const table of [
        "tour_translations",
        "tour_photos",
        "tour_pricing_categories",
        "tour_rates",
        "tour_linked_products"
      ]
    ) {
      yield* sql`DELETE FROM ${sql(table)} WHERE tour_id = ${tourId}`
    }
    for (const [position, url] of (c.photos ?? []).entries()) {
      yield* sql`INSERT INTO tour_photos (tour_id, position, url) VALUES (${tourId}, ${position}, ${url})`
    }
    for (const [position, p] of (c.pricingCategories ?? []).entries()) {
      yield* sql`
        INSERT INTO tour_pricing_categories (tour_id, id, position, title, is_default, min_age, max_age)
        VALUES (${tourId}, ${p.id}, ${position}, ${p.title}, ${p.isDefault ?? false}, ${p.minAge ?? null}, ${
        p.maxAge ?? null
      })`
    }
    for (const [position, r] of (c.rates ?? []).entries()) {
      yield* sql`
        INSERT INTO tour_rates (tour_id, id, position, title, description)
        VALUES (${tourId}, ${r.id}, ${position}, ${r.title}, ${r.description ?? null})`
    }
    for (const [position, l] of (c.linkedProducts ?? []).entries()) {
      yield* sql`
        INSERT INTO tour_linked_products (tour_id, position, label, language, linked_tour_id)
        VALUES (${tourId}, ${position}, ${l.label}, ${l.language ?? null}, ${l.tourId ?? null})`
    }
    for (const [locale, t] of Object.entries(c.translations ?? {})) {
      yield* sql`
        INSERT INTO tour_translations (tour_id, locale, title, excerpt, description_html, included_html, excluded_html,
          inclusions, exclusions, highlights, know_before, meeting_point_name, cancellation_title)
        VALUES (${tourId}, ${locale}, ${t.title}, ${t.excerpt ?? null}, ${t.descriptionHtml ?? null},
          ${t.includedHtml ?? null}, ${t.excludedHtml ?? null}, ${textArrayOrNull(sql, t.inclusions)},
          ${textArrayOrNull(sql, t.exclusions)}, ${textArrayOrNull(sql, t.highlights)},
          ${textArrayOrNull(sql, t.knowBefore)}, ${t.meetingPointName ?? null}, ${t.cancellationTitle ?? null})`
      for (const [categoryId, title] of Object.entries(t.pricingCategories ?? {})) {
        yield* sql`
          INSERT INTO tour_pricing_category_translations (tour_id, category_id, locale, title)
          VALUES (${tourId}, ${categoryId}, ${locale}, ${title})`
      }
      for (const [rateId, r] of Object.entries(t.rates ?? {})) {
        yield* sql`
          INSERT INTO tour_rate_translations (tour_id, rate_id, locale, title, description)
          VALUES (${tourId}, ${rateId}, ${locale}, ${r.title}, ${r.description ?? null})`
      }
    }
  }).pipe(Effect.withSpan("Demo.writeTourContent"))
