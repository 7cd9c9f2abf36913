/**
 * The catalogue's booking-system facts (rating, rates, pricing categories, duration, priced per
 * booking, departure times) refreshed with the season by TourSeason from the Bókun sandbox over real
 * HTTP, and shown by GET /api/v1/tours/{id}: translations of ids that remain survive, ids the product
 * lost disappear with their translations, the service's own content stays, a missing product or an
 * account that is down changes nothing.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { TourSeason } from "../../src/catalogue/TourSeason.js"
import { BookingSystemAccounts } from "../../src/operators/BookingSystemAccounts.js"
import { BokunSandbox, BokunSandboxLive } from "../../src/sandbox/bokun/index.js"
import { smallVendor } from "../sandbox/env.js"
import { createKey, makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { testServer } from "../support/server.js"
import { createSite, insertLinkedTour, linkSandboxAccount } from "../support/tours.js"

const SEASON_ENV = { TOUR_SEASON_TIMEOUT_MS: "1500", TOUR_SEASON_CONCURRENCY: "2", LOG_LEVEL: "Error" }
const season = TourSeason.Default.pipe(
  Layer.provide(BookingSystemAccounts.Default),
  Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(SEASON_ENV)))))
)
const env = Layer.mergeAll(BokunSandboxLive(), season).pipe(
  Layer.provideMerge(testServer({ env: { BOKUN_TIMEOUT_MS: "1000", BOKUN_RETRIES: "1" } }))
)

/**
 * A tour linked to a fresh sandbox vendor's Harbour Cruise (rating 4.6 of 210, 90 minutes, 10:00
 * and 14:30, Adult 16+ default and Child 3-15, rates Standard and With lunch), with its own title
 * and a Norwegian translation of both rates and both categories; then made stale as if the booking
 * system had changed since: no rating or duration, old titles, an extra rate `gone` (translated),
 * the defaults swapped.
 */
const staleTour = Effect.gen(function*() {
  const sandbox = yield* BokunSandbox
  const sql = yield* SqlClient.SqlClient
  const w = yield* makeWorld
  const vendor = yield* sandbox.createVendor(smallVendor(`Facts ${w.tag}`))
  yield* linkSandboxAccount(w.alpha, sandbox.baseUrl, vendor)
  const site = yield* createSite(w.alpha, "Alpha")
  const p = vendor.products[0]!
  const adult = String(p.pricingCategories.find((c) => c.isDefault)!.id)
  const child = String(p.pricingCategories.find((c) => !c.isDefault)!.id)
  const standard = String(p.rates[0]!.id)
  const lunch = String(p.rates[1]!.id)
  const tourId = yield* insertLinkedTour({
    operatorId: w.alpha,
    title: "Our Harbour Cruise",
    sites: [site],
    product: p,
    content: {
      excerpt: "Our own words.",
      translations: {
        nb: {
          title: "Havnecruise",
          pricingCategories: { [adult]: "Voksen", [child]: "Barn" },
          rates: { [standard]: { title: "Standard (nb)" }, [lunch]: { title: "Med lunsj" } }
        }
      }
    }
  })
  yield* sql`UPDATE tours SET rating_average = NULL, rating_count = NULL, duration_minutes = NULL, departure_times = '{09:00}' WHERE id = ${tourId}`
  yield* sql`UPDATE tour_rates SET title = 'Old title', position = 5 WHERE tour_id = ${tourId}`
  yield* sql`INSERT INTO tour_rates (tour_id, id, position, title) VALUES (${tourId}, 'gone', 0, 'Gone')`
  yield* sql`INSERT INTO tour_rate_translations (tour_id, rate_id, locale, title) VALUES (${tourId}, 'gone', 'nb', 'Borte')`
  yield* sql`UPDATE tour_pricing_categories SET is_default = false WHERE tour_id = ${tourId}`
  yield* sql`UPDATE tour_pricing_categories SET is_default = true, title = 'Kid' WHERE tour_id = ${tourId} AND id = ${child}`
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
  return { sandbox, sql, vendor, product: p, tourId, key: key.token, adult, child, standard, lunch }
})

const detail = (key: string, tourId: string, query = "") =>
  Effect.map(get(`/api/v1/tours/${tourId}${query}`, key), (res) => {
    expect(res.status, res.text).toBe(200)
    return res.body
  })

const rateTranslations = (sql: SqlClient.SqlClient, tourId: string) =>
  sql<{ rate_id: string; title: string }>`
    SELECT rate_id, title FROM tour_rate_translations WHERE tour_id = ${tourId} ORDER BY rate_id`

layer(env, { excludeTestServices: true, timeout: 120_000 })("tour facts from the booking system", (it) => {
  it.effect("a refresh shows the product's rates, categories, rating and duration; translations of remaining ids survive; a removed rate disappears", () =>
    Effect.gen(function*() {
      const s = yield* staleTour
      const before = yield* detail(s.key, s.tourId)
      expect(before.rating).toBeNull()
      expect(before.rates.map((r: any) => r.id)).toContain("gone")

      const summary = yield* (yield* TourSeason).refresh({ tourId: s.tourId })
      expect(summary).toMatchObject({ tours: 1, known: 1, facts_updated: 1, facts_missing: 0 })
      expect(summary.results[0]!.facts).toBe("updated")

      const after = yield* detail(s.key, s.tourId)
      expect(after.rating).toEqual({ average: 4.6, count: 210 })
      expect(after.duration_minutes).toBe(90)
      expect(after.priced_per_booking).toBe(false)
      expect(after.departure_times).toEqual(["10:00", "14:30"])
      expect(after.rates).toEqual([
        { id: s.standard, title: "Standard", description: null },
        { id: s.lunch, title: "With lunch", description: null }
      ])
      expect(after.pricing_categories).toEqual([
        { id: s.adult, title: "Adult", is_default: true, min_age: 16, max_age: null },
        { id: s.child, title: "Child", is_default: false, min_age: 3, max_age: 15 }
      ])
      // The service's own content is left alone.
      expect(after.title).toBe("Our Harbour Cruise")
      expect(after.excerpt).toBe("Our own words.")
      // from_price uses the booking system's default category of this run (Adult 499 NOK).
      expect(after.from_price).toEqual({ amount_minor: 49900, currency: "NOK" })

      const nb = yield* detail(s.key, s.tourId, "?locale=nb")
      expect(nb.locale).toBe("nb")
      expect(nb.rates.map((r: any) => r.title)).toEqual(["Standard (nb)", "Med lunsj"])
      expect(nb.pricing_categories.map((c: any) => c.title)).toEqual(["Voksen", "Barn"])
      expect(yield* rateTranslations(s.sql, s.tourId)).toHaveLength(2)

      // The booking system drops a rate: it goes, with its translation; the other's stays.
      yield* s.sql`DELETE FROM bokun_sandbox.rates WHERE id = ${Number(s.lunch)}`
      yield* (yield* TourSeason).refresh({ tourId: s.tourId })
      const dropped = yield* detail(s.key, s.tourId)
      expect(dropped.rates).toEqual([{ id: s.standard, title: "Standard", description: null }])
      const nb2 = yield* detail(s.key, s.tourId, "?locale=nb")
      expect(nb2.rates).toEqual([{ id: s.standard, title: "Standard (nb)", description: null }])
      expect(yield* rateTranslations(s.sql, s.tourId)).toEqual([{ rate_id: s.standard, title: "Standard (nb)" }])
    }))

  it.effect("an account that is down, or a product missing from its catalogue, changes nothing", () =>
    Effect.gen(function*() {
      const s = yield* staleTour
      const before = yield* detail(s.key, s.tourId)
      const beforeNb = yield* detail(s.key, s.tourId, "?locale=nb")

      yield* s.sandbox.faults.set({ down: true }, { vendorId: s.vendor.id })
      const down = yield* (yield* TourSeason).refresh({ tourId: s.tourId })
      expect(down).toMatchObject({ tours: 1, known: 0, unknown: 1, facts_updated: 0, facts_missing: 0 })
      expect(down.results[0]!.facts).toBe("not_read")
      const { season: _s, ...sameBefore } = before
      const { season: _a, ...sameAfter } = yield* detail(s.key, s.tourId)
      expect(sameAfter).toEqual(sameBefore)
      expect(yield* detail(s.key, s.tourId, "?locale=nb")).toEqual(beforeNb)
      yield* s.sandbox.faults.set({ down: false }, { vendorId: s.vendor.id })

      // A product the account's catalogue does not list: the tour stays as it is.
      yield* s.sql`UPDATE tours SET booking_system_product_id = '999999999' WHERE id = ${s.tourId}`
      const missing = yield* (yield* TourSeason).refresh({ tourId: s.tourId })
      expect(missing).toMatchObject({ tours: 1, facts_updated: 0, facts_missing: 1 })
      expect(missing.results[0]!.facts).toBe("not_in_booking_system")
      const { season: _m, ...sameMissing } = yield* detail(s.key, s.tourId)
      expect(sameMissing).toEqual(sameBefore)
      expect((yield* rateTranslations(s.sql, s.tourId)).map((r) => r.rate_id)).toContain("gone")
    }))

  it.effect("the database refusing a tour's facts fails that tour's facts alone, storing none of them (FactsNotStored)", () =>
    Effect.gen(function*() {
      const s = yield* staleTour
      const before = yield* detail(s.key, s.tourId)
      yield* s.sql.unsafe(`
        CREATE FUNCTION refuse_rate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'refused rate %', NEW.title; END $$;
        CREATE TRIGGER refuse_rate BEFORE INSERT OR UPDATE ON tour_rates
          FOR EACH ROW WHEN (NEW.title = 'With lunch') EXECUTE FUNCTION refuse_rate();`)
      const summary = yield* (yield* TourSeason).refresh({ tourId: s.tourId }).pipe(
        Effect.ensuring(
          Effect.orDie(s.sql.unsafe(`DROP TRIGGER refuse_rate ON tour_rates; DROP FUNCTION refuse_rate();`))
        )
      )
      expect(summary).toMatchObject({ tours: 1, known: 1, facts_updated: 0 })
      expect(summary.results[0]!.facts).toBe("failed")
      // One transaction: nothing of the facts was stored (the rating and the rates are as before).
      const after = yield* detail(s.key, s.tourId)
      expect(after.rating).toBeNull()
      expect(after.rates).toEqual(before.rates)
      expect(after.pricing_categories).toEqual(before.pricing_categories)
    }))
})
