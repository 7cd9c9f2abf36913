/**
 * `from_price` and `season` of the catalogue (spec §2 "Tour"), computed from the booking systems
 * into `tour_season_cache` by a job (src/jobs/tourSeason.ts), by `tours refresh-season` and at the
 * demo's start. The list and detail only read the cache: they never wait for a booking system.
 *
 * For every published tour linked to a booking-system product (its operator has an account), the
 * next 12 months of departures are read through the port in chunks of 31 days, the whole read within
 * `TOUR_SEASON_TIMEOUT_MS` (src/catalogue/readDepartures.ts), and src/catalogue/availability.ts
 * decides: `next_available_date` is the first day from today with a bookable departure, `from_price`
 * the lowest adult price of the bookable departures from today + 7 days on.
 *
 * When the booking system does not answer in time (or refuses): `known` false and no
 * `next_available_date` (a date that may have sold out is not shown), while the last computed price
 * stays for `TOUR_SEASON_PRICE_KEEP_HOURS` after it was computed (`computed_at` is when the values
 * were last computed from an answer), then goes too. A tour never computed keeps no row: not known.
 *
 * In the same run, before the seasons, the booking system's facts of those tours (rating, duration,
 * priced per booking, departure times, pricing categories and rates: src/catalogue/tourFacts.ts) are
 * taken from one `products(account)` call per account within the same deadline and stored one
 * transaction per tour (src/catalogue/storeTourFacts.ts). A product missing from the answer leaves its
 * tour as it is (logged); an account whose catalogue does not answer changes no facts, and its
 * seasons are read as they would be otherwise.
 *
 * Accounts are refreshed `TOUR_SEASON_CONCURRENCY` at a time, the tours of one account one after
 * another; after the first tour its booking system did not answer for, the account's remaining tours
 * in this run are marked not known without asking it again. One account failing, however it fails,
 * never stops the others. Cache rows of tours no longer published or linked are removed (they read
 * as not known).
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect } from "effect"
import { TourAvailabilityConfig } from "../config.js"
import { localDayAt } from "../domain/localDay.js"
import { seasonOf, seasonWindow } from "./availability.js"
import { tourFactsOf } from "./tourFacts.js"
import { type BookingSystemAccount, BookingSystem, BookingSystemUnavailable } from "../ports/BookingSystem.js"
import { BookingSystemAccounts } from "../operators/BookingSystemAccounts.js"
import { readDepartures } from "./readDepartures.js"
import { storeTourFacts } from "./storeTourFacts.js"

interface SeasonTour {
  readonly id: string
  readonly timezone: string
  readonly currency: string
  readonly product_id: string
  readonly account_id: string
}

/**
 * What happened to a tour's booking-system facts in this run: `updated` from the product,
 * `not_in_booking_system` (the account's catalogue has no such product: left as it was),
 * `not_read` (the account's catalogue did not answer or refused: left as it was), `failed` (could not
 * be stored: left as it was).
 */
export type TourFactsOutcome = "updated" | "not_in_booking_system" | "not_read" | "failed"

export interface TourSeasonResult {
  readonly tour_id: string
  readonly known: boolean
  readonly from_price_minor: number | null
  readonly next_available_date: string | null
  /** Why not known. */
  readonly reason: string | null
  readonly facts: TourFactsOutcome
}

export interface TourSeasonSummary {
  /** Published tours linked to a booking-system product. */
  readonly tours: number
  readonly known: number
  readonly unknown: number
  /** Of `unknown`: not asked, because their account's booking system had not answered earlier in the run. */
  readonly skipped: number
  readonly accounts: number
  /** Accounts with at least one tour not known. */
  readonly accounts_failed: number
  /** Cache rows removed: tours no longer published or linked. */
  readonly dropped: number
  /** Tours whose rating, rates, pricing categories, duration and departure times were updated. */
  readonly facts_updated: number
  /** Tours whose product the booking system's catalogue did not list (left as they were). */
  readonly facts_missing: number
  readonly results: ReadonlyArray<TourSeasonResult>
}

export class TourSeason extends Effect.Service<TourSeason>()("Catalogue/TourSeason", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const config = yield* TourAvailabilityConfig

    const linkedTours = (tourId: string | undefined) =>
      sql<SeasonTour>`
        SELECT t.id, t.timezone, t.currency, t.booking_system_product_id AS product_id,
          o.booking_system_account_id AS account_id
        FROM tours t JOIN operators o ON o.id = t.operator_id
        WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL
          AND o.booking_system_account_id IS NOT NULL
          ${tourId === undefined ? sql`` : sql`AND t.id = ${tourId}::uuid`}
        ORDER BY o.booking_system_account_id, t.created_at, t.id`.pipe(Effect.orDie)

    const dropUnlinked = sql<{ tour_id: string }>`
      DELETE FROM tour_season_cache c
      USING tours t JOIN operators o ON o.id = t.operator_id
      WHERE c.tour_id = t.id
        AND NOT (t.status = 'published' AND t.booking_system_product_id IS NOT NULL
          AND o.booking_system_account_id IS NOT NULL)
      RETURNING c.tour_id`.pipe(Effect.orDie, Effect.map((rows) => rows.length))

    const storeKnown = (tour: SeasonTour, at: Date, fromPrice: number | null, next: string | null) =>
      sql`
        INSERT INTO tour_season_cache (tour_id, from_price_minor, from_price_currency, known, next_available_date, computed_at)
        VALUES (${tour.id}, ${fromPrice}, ${fromPrice === null ? null : tour.currency}, true, ${next}, ${at})
        ON CONFLICT (tour_id) DO UPDATE SET from_price_minor = EXCLUDED.from_price_minor,
          from_price_currency = EXCLUDED.from_price_currency, known = true,
          next_available_date = EXCLUDED.next_available_date, computed_at = EXCLUDED.computed_at`.pipe(Effect.orDie)

    /** Not known now: no next date; the last price only while it is recent enough. */
    const storeUnknown = (tourId: string, at: Date) =>
      sql`
        UPDATE tour_season_cache SET known = false, next_available_date = NULL,
          from_price_minor = CASE WHEN computed_at > ${at}::timestamptz - make_interval(hours => ${config.seasonPriceKeepHours})
            THEN from_price_minor END,
          from_price_currency = CASE WHEN computed_at > ${at}::timestamptz - make_interval(hours => ${config.seasonPriceKeepHours})
            THEN from_price_currency END
        WHERE tour_id = ${tourId}`.pipe(Effect.orDie)

    /** Read after the facts are stored: the booking system's default category of this run. */
    const defaultCategory = (tourId: string) =>
      sql<{ id: string }>`SELECT id FROM tour_pricing_categories WHERE tour_id = ${tourId} AND is_default`.pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]?.id ?? null)
      )

    const unknownResult = (tourId: string, reason: string, facts: TourFactsOutcome): TourSeasonResult =>
      ({ tour_id: tourId, known: false, from_price_minor: null, next_available_date: null, reason, facts })

    /** The account's catalogue, once, within the deadline; cut even inside an uninterruptible region. */
    const readProducts = (account: BookingSystemAccount) =>
      bookingSystem.products(account).pipe(
        Effect.interruptible,
        Effect.timeoutFail({
          duration: Duration.millis(config.seasonTimeoutMs),
          onTimeout: () =>
            new BookingSystemUnavailable({
              accountId: account.id,
              operation: "products",
              reason: "timeout",
              detail: `no answer within ${config.seasonTimeoutMs} ms`
            })
        })
      )

    /** Each tour's facts from the account's catalogue, one transaction per tour; nothing changes without an answer. */
    const refreshFacts = Effect.fn("TourSeason.refreshFacts")(function*(
      account: BookingSystemAccount,
      tours: ReadonlyArray<SeasonTour>
    ) {
      yield* Effect.annotateCurrentSpan({ "bokun.account_id": account.id, tours: tours.length })
      const outcomes = new Map<string, TourFactsOutcome>()
      const read = yield* Effect.either(readProducts(account))
      if (read._tag === "Left") {
        const e = read.left
        yield* Effect.logWarning(`facts of account ${account.id} not read, its tours left as they are: ${e._tag} ${e.reason}: ${e.detail}`)
        for (const t of tours) outcomes.set(t.id, "not_read")
        return outcomes
      }
      const products = new Map(read.right.map((p) => [p.id, p]))
      for (const tour of tours) {
        const product = products.get(tour.product_id)
        if (product === undefined) {
          yield* Effect.logWarning(`tour ${tour.id}: product ${tour.product_id} not in the catalogue of account ${account.id}; left as it is`)
          outcomes.set(tour.id, "not_in_booking_system")
          continue
        }
        const stored = yield* Effect.either(storeTourFacts(sql, tour.id, tourFactsOf(product)))
        if (stored._tag === "Left") {
          yield* Effect.logError(`facts of tour ${tour.id} not stored`, stored.left)
          outcomes.set(tour.id, "failed")
        } else {
          outcomes.set(tour.id, "updated")
        }
      }
      return outcomes
    })

    /** The tours of one account, one after another; stops asking after the booking system failed to answer. */
    const refreshAccount = Effect.fn("TourSeason.refreshAccount")(function*(
      accountId: string,
      tours: ReadonlyArray<SeasonTour>
    ) {
      yield* Effect.annotateCurrentSpan({ "bokun.account_id": accountId, tours: tours.length })
      const results: Array<TourSeasonResult & { skipped?: boolean }> = []
      let facts = new Map<string, TourFactsOutcome>()
      const factsOf = (tourId: string) => facts.get(tourId) ?? "not_read"
      const markAll = (rest: ReadonlyArray<SeasonTour>, reason: string, skipped: boolean) =>
        Effect.forEach(rest, (t) =>
          Effect.gen(function*() {
            yield* storeUnknown(t.id, new Date(yield* Clock.currentTimeMillis))
            results.push({ ...unknownResult(t.id, reason, factsOf(t.id)), skipped })
          }), { discard: true })
      const found = yield* Effect.either(accounts.byId(accountId))
      if (found._tag === "Left") {
        yield* markAll(tours, found.left.message, false)
        return results
      }
      const account = found.right.account
      facts = yield* refreshFacts(account, tours)
      for (const [i, tour] of tours.entries()) {
        const at = new Date(yield* Clock.currentTimeMillis)
        const window = seasonWindow(localDayAt(tour.timezone, at))
        const read = yield* Effect.either(
          readDepartures(bookingSystem, account, { productId: tour.product_id, from: window.from, to: window.to }, Duration.millis(config.seasonTimeoutMs))
        )
        if (read._tag === "Left") {
          const e = read.left
          const reason = `${e._tag} ${e.reason}: ${e.detail}`
          yield* Effect.logWarning(`season of tour ${tour.id} not known: ${reason}`)
          yield* storeUnknown(tour.id, at)
          results.push(unknownResult(tour.id, reason, factsOf(tour.id)))
          if (e._tag === "BookingSystemUnavailable") {
            // It did not answer: do not make the rest of its tours wait for it in this run.
            yield* markAll(tours.slice(i + 1), `not asked: account ${accountId} did not answer for an earlier tour`, true)
            break
          }
          continue
        }
        const season = seasonOf(read.right, {
          timeZone: tour.timezone,
          currency: tour.currency,
          defaultCategoryId: yield* defaultCategory(tour.id),
          now: at
        })
        yield* storeKnown(tour, at, season.fromPriceMinor, season.nextAvailableDate)
        results.push({
          tour_id: tour.id,
          known: true,
          from_price_minor: season.fromPriceMinor,
          next_available_date: season.nextAvailableDate,
          reason: null,
          facts: factsOf(tour.id)
        })
      }
      return results
    })

    /** Every linked published tour (or one), now. Never fails: each account's failure stays its own. */
    const refresh = Effect.fn("TourSeason.refresh")(function*(options: { readonly tourId?: string } = {}) {
      const dropped = options.tourId === undefined ? yield* dropUnlinked : 0
      const tours = yield* linkedTours(options.tourId)
      const byAccount = new Map<string, Array<SeasonTour>>()
      for (const t of tours) byAccount.set(t.account_id, [...(byAccount.get(t.account_id) ?? []), t])
      const perAccount = yield* Effect.forEach(
        [...byAccount],
        ([accountId, list]) =>
          refreshAccount(accountId, list).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logError(`season refresh of account ${accountId} failed`, cause),
                list.map((t) => ({ ...unknownResult(t.id, Cause.pretty(cause).split("\n")[0]!, "failed"), skipped: false }))
              )
            )
          ),
        { concurrency: config.seasonConcurrency }
      )
      const results = perAccount.flat()
      const summary: TourSeasonSummary = {
        tours: tours.length,
        known: results.filter((r) => r.known).length,
        unknown: results.filter((r) => !r.known).length,
        skipped: results.filter((r) => r.skipped === true).length,
        accounts: byAccount.size,
        accounts_failed: perAccount.filter((rs) => rs.some((r) => !r.known)).length,
        dropped,
        facts_updated: results.filter((r) => r.facts === "updated").length,
        facts_missing: results.filter((r) => r.facts === "not_in_booking_system").length,
        results: results.map(({ skipped: _, ...r }) => r)
      }
      yield* Effect.annotateCurrentSpan({ tours: summary.tours, known: summary.known, unknown: summary.unknown })
      return summary
    })

    return { refresh } as const
  })
}) {}
