/**
 * The SQL of the season job (TourSeason): the published tours linked to a booking-system product,
 * their `tour_season_cache` rows, and the booking system's facts of a tour
 * (src/catalogue/tourFacts.ts). Typed with SqlSchema and the row schema below; a database error is
 * a defect at its edge (repoEdge: a span per method), once, except while a tour's facts are stored:
 * the database refusing what a booking system sent is `FactsNotStored`, which leaves that tour as
 * it was and fails no other.
 *
 * The facts of one tour are written in one transaction: rating, duration, priced per booking and
 * departure times on `tours`; pricing categories and rates upserted by id (the booking system's), so
 * the translations of ids that remain stay (they are keyed by id), and ids the product no longer has
 * deleted (their translations cascade). The service's own content (title, texts, photos, meeting
 * point, ...) is not touched.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Data, Effect, Predicate, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import { annotateSpan } from "../observability/spanFn.js"
import type { TourFacts } from "./tourFacts.js"

export const SeasonTour = Schema.Struct({
  id: Schema.String,
  timezone: Schema.String,
  currency: Schema.String,
  product_id: Schema.String,
  account_id: Schema.String
})
export type SeasonTour = typeof SeasonTour.Type

/** The database refused a tour's facts: nothing of them was stored (one transaction). */
export class FactsNotStored extends Data.TaggedError("FactsNotStored")<{ readonly cause: SqlError }> {
  override get message() {
    return this.cause.message
  }
}

/** The database refusing a tour's facts is the feature's error; a row that does not decode stays a defect (the edge's). */
const factsRefused = <A, E, R>(self: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, E | FactsNotStored, R> =>
  Effect.catchIf(
    self,
    (e): e is SqlError => Predicate.isTagged(e, "SqlError"),
    (e) => Effect.fail(new FactsNotStored({ cause: e }))
  )

const TourIds = Schema.Struct({
  tourId: Schema.String,
  /** The ids that stay, as JSON. */
  ids: Schema.String
})

export class TourSeasonRepo extends Effect.Service<TourSeasonRepo>()("Catalogue/TourSeasonRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A JSON array of texts as a text[] (one parameter). */
    const textArray = (json: string) => sql`ARRAY(SELECT jsonb_array_elements_text(${json}::jsonb))`

    /** Every published tour linked to a product of an account (or one), by account. */
    const linkedTours = SqlSchema.findAll({
      Request: Schema.UndefinedOr(Schema.String),
      Result: SeasonTour,
      execute: (tourId) =>
        sql`
          SELECT t.id, t.timezone, t.currency, t.booking_system_product_id AS product_id,
            o.booking_system_account_id AS account_id
          FROM tours t JOIN operators o ON o.id = t.operator_id
          WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL
            AND o.booking_system_account_id IS NOT NULL
            ${tourId === undefined ? sql`` : sql`AND t.id = ${tourId}::uuid`}
          ORDER BY o.booking_system_account_id, t.created_at, t.id`
    })

    /** Removes the cache rows of tours no longer published or linked; answers how many. */
    const dropUnlinked = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: () =>
        sql`
          WITH dropped AS (
            DELETE FROM tour_season_cache c
            USING tours t JOIN operators o ON o.id = t.operator_id
            WHERE c.tour_id = t.id
              AND NOT (t.status = 'published' AND t.booking_system_product_id IS NOT NULL
                AND o.booking_system_account_id IS NOT NULL)
            RETURNING c.tour_id
          )
          SELECT count(*)::int AS n FROM dropped`
    })

    /** A season computed from an answer, at `at`. */
    const storeKnown = SqlSchema.void({
      Request: Schema.Struct({
        tourId: Schema.String,
        at: Schema.DateFromSelf,
        fromPriceMinor: Schema.NullOr(Schema.Number),
        currency: Schema.NullOr(Schema.String),
        nextAvailableDate: Schema.NullOr(Schema.String)
      }),
      execute: (s) =>
        sql`
          INSERT INTO tour_season_cache (tour_id, from_price_minor, from_price_currency, known, next_available_date, computed_at)
          VALUES (${s.tourId}, ${s.fromPriceMinor}, ${s.currency}, true, ${s.nextAvailableDate}, ${s.at})
          ON CONFLICT (tour_id) DO UPDATE SET from_price_minor = EXCLUDED.from_price_minor,
            from_price_currency = EXCLUDED.from_price_currency, known = true,
            next_available_date = EXCLUDED.next_available_date, computed_at = EXCLUDED.computed_at`
    })

    /** Not known now: no next date; the last price only while computed within `keepHours` of `at`. */
    const storeUnknown = SqlSchema.void({
      Request: Schema.Struct({ tourId: Schema.String, at: Schema.DateFromSelf, keepHours: Schema.Number }),
      execute: ({ at, keepHours, tourId }) =>
        sql`
          UPDATE tour_season_cache SET known = false, next_available_date = NULL,
            from_price_minor = CASE WHEN computed_at > ${at}::timestamptz - make_interval(hours => ${keepHours})
              THEN from_price_minor END,
            from_price_currency = CASE WHEN computed_at > ${at}::timestamptz - make_interval(hours => ${keepHours})
              THEN from_price_currency END
          WHERE tour_id = ${tourId}`
    })

    /** The tour's default pricing category, if it has one. */
    const defaultCategory = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (tourId) => sql`SELECT id FROM tour_pricing_categories WHERE tour_id = ${tourId} AND is_default`
    })

    const updateTour = SqlSchema.void({
      Request: Schema.Struct({
        tourId: Schema.String,
        ratingAverage: Schema.NullOr(Schema.Number),
        ratingCount: Schema.NullOr(Schema.Number),
        durationMinutes: Schema.NullOr(Schema.Number),
        pricedPerBooking: Schema.Boolean,
        /** As JSON. */
        departureTimes: Schema.String
      }),
      execute: (f) =>
        sql`
          UPDATE tours SET
            rating_average = ${f.ratingAverage},
            rating_count = ${f.ratingCount},
            duration_minutes = ${f.durationMinutes},
            priced_per_booking = ${f.pricedPerBooking},
            departure_times = ${textArray(f.departureTimes)},
            updated_at = now()
          WHERE id = ${f.tourId}
            AND (rating_average, rating_count, duration_minutes, priced_per_booking, departure_times)
              IS DISTINCT FROM (${f.ratingAverage}::numeric(3, 2), ${f.ratingCount}::integer,
                ${f.durationMinutes}::integer, ${f.pricedPerBooking}::boolean, ${textArray(f.departureTimes)})`
    })

    const deleteCategoriesBut = SqlSchema.void({
      Request: TourIds,
      execute: ({ ids, tourId }) =>
        sql`DELETE FROM tour_pricing_categories WHERE tour_id = ${tourId} AND id <> ALL(${textArray(ids)})`
    })

    const clearDefaultCategory = SqlSchema.void({
      Request: Schema.String,
      execute: (tourId) =>
        sql`UPDATE tour_pricing_categories SET is_default = false WHERE tour_id = ${tourId} AND is_default`
    })

    const upsertCategory = SqlSchema.void({
      Request: Schema.Struct({
        tourId: Schema.String,
        id: Schema.String,
        position: Schema.Number,
        title: Schema.String,
        isDefault: Schema.Boolean,
        minAge: Schema.NullOr(Schema.Number),
        maxAge: Schema.NullOr(Schema.Number)
      }),
      execute: (c) =>
        sql`
          INSERT INTO tour_pricing_categories (tour_id, id, position, title, is_default, min_age, max_age)
          VALUES (${c.tourId}, ${c.id}, ${c.position}, ${c.title}, ${c.isDefault}, ${c.minAge}, ${c.maxAge})
          ON CONFLICT (tour_id, id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
            is_default = EXCLUDED.is_default, min_age = EXCLUDED.min_age, max_age = EXCLUDED.max_age`
    })

    const deleteRatesBut = SqlSchema.void({
      Request: TourIds,
      execute: ({ ids, tourId }) =>
        sql`DELETE FROM tour_rates WHERE tour_id = ${tourId} AND id <> ALL(${textArray(ids)})`
    })

    const upsertRate = SqlSchema.void({
      Request: Schema.Struct({
        tourId: Schema.String,
        id: Schema.String,
        position: Schema.Number,
        title: Schema.String,
        description: Schema.NullOr(Schema.String)
      }),
      execute: (r) =>
        sql`
          INSERT INTO tour_rates (tour_id, id, position, title, description)
          VALUES (${r.tourId}, ${r.id}, ${r.position}, ${r.title}, ${r.description})
          ON CONFLICT (tour_id, id) DO UPDATE SET position = EXCLUDED.position, title = EXCLUDED.title,
            description = EXCLUDED.description`
    })

    const idsOf = (items: ReadonlyArray<{ readonly id: string }>) => JSON.stringify(items.map((i) => i.id))

    /** The booking system's facts of one tour, in one transaction (see above). */
    const storeFacts = (tourId: string, f: TourFacts) =>
      Effect.gen(function*() {
        yield* annotateSpan({ tour_id: tourId })
        yield* updateTour({
          tourId,
          ratingAverage: f.rating?.average ?? null,
          ratingCount: f.rating?.count ?? null,
          durationMinutes: f.durationMinutes,
          pricedPerBooking: f.pricedPerBooking,
          departureTimes: JSON.stringify(f.departureTimes)
        })
        yield* deleteCategoriesBut({ tourId, ids: idsOf(f.pricingCategories) })
        // At most one default per tour (a unique index checked row by row): clear it, then set it again.
        yield* clearDefaultCategory(tourId)
        for (const [position, c] of f.pricingCategories.entries()) yield* upsertCategory({ tourId, position, ...c })
        yield* deleteRatesBut({ tourId, ids: idsOf(f.rates) })
        for (const [position, r] of f.rates.entries()) yield* upsertRate({ tourId, position, ...r })
      }).pipe(sql.withTransaction, factsRefused)

    return repoEdge("TourSeasonRepo", {
      linkedTours,
      dropUnlinked,
      storeKnown,
      storeUnknown,
      defaultCategory,
      storeFacts
    })
  })
}) {}
