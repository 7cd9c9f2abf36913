/**
 * Writes the booking system's facts of one linked tour (src/catalogue/tourFacts.ts) in one
 * transaction: rating, duration, priced per booking and departure times on `tours`; pricing
 * categories and rates upserted by id (the booking system's), so the translations of ids that
 * remain stay (they are keyed by id), and ids the product no longer has deleted (their translations
 * cascade). The service's own content (title, texts, photos, meeting point, ...) is not touched.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { TourFacts } from "./tourFacts.js"

export const storeTourFacts = (sql: SqlClient.SqlClient, tourId: string, f: TourFacts) => {
  const ids = (items: ReadonlyArray<{ readonly id: string }>) =>
    sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(items.map((i) => i.id))}::jsonb))`
  const times = sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(f.departureTimes)}::jsonb))`
  return Effect.gen(function*() {
    yield* sql`
      UPDATE tours SET
        rating_average = ${f.rating?.average ?? null},
        rating_count = ${f.rating?.count ?? null},
        duration_minutes = ${f.durationMinutes},
        priced_per_booking = ${f.pricedPerBooking},
        departure_times = ${times},
        updated_at = now()
      WHERE id = ${tourId}
        AND (rating_average, rating_count, duration_minutes, priced_per_booking, departure_times)
          IS DISTINCT FROM (${f.rating?.average ?? null}::numeric(3, 2), ${f.rating?.count ?? null}::integer,
            ${f.durationMinutes}::integer, ${f.pricedPerBooking}::boolean, ${times})`

    yield* sql`
      DELETE FROM tour_pricing_categories
      WHERE tour_id = ${tourId} AND id <> ALL(${ids(f.pricingCategories)})`
    // At most one default per tour (a unique index checked row by row): clear it, then set it again.
    yield* sql`UPDATE tour_pricing_categories SET is_default = false WHERE tour_id = ${tourId} AND is_default`
    for (const [position, c] of f.pricingCategories.entries()) {
      yield* sql`
        INSERT INTO tour_pricing_categories (tour_id, id, position, title, is_default, min_age, max_age)
        VALUES (${tourId}, ${c.id}, ${position}, ${c.title}, ${c.isDefault}, ${c.minAge}, ${c.maxAge})
        ON CONFLICT (tour_id, id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
          is_default = EXCLUDED.is_default, min_age = EXCLUDED.min_age, max_age = EXCLUDED.max_age`
    }

    yield* sql`DELETE FROM tour_rates WHERE tour_id = ${tourId} AND id <> ALL(${ids(f.rates)})`
    for (const [position, r] of f.rates.entries()) {
      yield* sql`
        INSERT INTO tour_rates (tour_id, id, position, title, description)
        VALUES (${tourId}, ${r.id}, ${position}, ${r.title}, ${r.description})
        ON CONFLICT (tour_id, id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
          description = EXCLUDED.description`
    }
  }).pipe(sql.withTransaction, Effect.withSpan("storeTourFacts", { attributes: { tour_id: tourId } }))
}
