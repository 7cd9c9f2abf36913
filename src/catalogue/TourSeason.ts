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
 * transaction per tour (TourSeasonRepo.storeFacts). A product missing from the answer leaves its
 * tour as it is (logged); an account whose catalogue does not answer changes no facts, and its
 * seasons are read as they would be otherwise.
 *
 * Accounts are refreshed `TOUR_SEASON_CONCURRENCY` at a time, the tours of one account one after
 * another; after the first tour its booking system did not answer for, the account's remaining tours
 * in this run are marked not known without asking it again. One account failing, however it fails,
 * never stops the others. Cache rows of tours no longer published or linked are removed (they read
 * as not known). SQL: TourSeasonRepo.
 */
import { Cause, Clock, Duration, Effect, Option } from "effect"
import { localDayAt } from "../domain/localDay.js"
import { annotateSpan } from "../observability/spanFn.js"
import { BookingSystemAccounts } from "../operators/BookingSystemAccounts.js"
import { BookingSystem, type BookingSystemAccount, BookingSystemUnavailable } from "../ports/BookingSystem.js"
import { seasonOf, seasonWindow } from "./availability.js"
import { TourAvailabilityConfig } from "./config.js"
import { readDepartures } from "./readDepartures.js"
import { tourFactsOf } from "./tourFacts.js"
import { type SeasonTour, TourSeasonRepo } from "./TourSeasonRepo.js"

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
    const repo = yield* TourSeasonRepo
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const config = yield* TourAvailabilityConfig

    const storeUnknown = (tourId: string, at: Date) =>
      repo.storeUnknown({ tourId, at, keepHours: config.seasonPriceKeepHours })

    const unknownResult = (tourId: string, reason: string, facts: TourFactsOutcome): TourSeasonResult => ({
      tour_id: tourId,
      known: false,
      from_price_minor: null,
      next_available_date: null,
      reason,
      facts
    })

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
      yield* annotateSpan({ "bokun.account_id": account.id, tours: tours.length })
      const outcomes = new Map<string, TourFactsOutcome>()
      const read = yield* Effect.either(readProducts(account))
      if (read._tag === "Left") {
        const e = read.left
        yield* Effect.logWarning(
          `facts of account ${account.id} not read, its tours left as they are: ${e._tag} ${e.reason}: ${e.detail}`
        )
        for (const t of tours) outcomes.set(t.id, "not_read")
        return outcomes
      }
      const products = new Map(read.right.map((p) => [p.id, p]))
      for (const tour of tours) {
        const product = products.get(tour.product_id)
        if (product === undefined) {
          yield* Effect.logWarning(
            `tour ${tour.id}: product ${tour.product_id} not in the catalogue of account ${account.id}; left as it is`
          )
          outcomes.set(tour.id, "not_in_booking_system")
          continue
        }
        const stored = yield* Effect.either(repo.storeFacts(tour.id, tourFactsOf(product)))
        if (stored._tag === "Left") {
          yield* Effect.logError(`facts of tour ${tour.id} not stored`, stored.left.cause)
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
      yield* annotateSpan({ "bokun.account_id": accountId, tours: tours.length })
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
          readDepartures(
            bookingSystem,
            account,
            { productId: tour.product_id, from: window.from, to: window.to },
            Duration.millis(config.seasonTimeoutMs)
          )
        )
        if (read._tag === "Left") {
          const e = read.left
          const reason = `${e._tag} ${e.reason}: ${e.detail}`
          yield* Effect.logWarning(`season of tour ${tour.id} not known: ${reason}`)
          yield* storeUnknown(tour.id, at)
          results.push(unknownResult(tour.id, reason, factsOf(tour.id)))
          if (e._tag === "BookingSystemUnavailable") {
            // It did not answer: do not make the rest of its tours wait for it in this run.
            yield* markAll(
              tours.slice(i + 1),
              `not asked: account ${accountId} did not answer for an earlier tour`,
              true
            )
            break
          }
          continue
        }
        const season = seasonOf(read.right, {
          timeZone: tour.timezone,
          currency: tour.currency,
          defaultCategoryId: Option.getOrNull(Option.map(yield* repo.defaultCategory(tour.id), (c) => c.id)),
          now: at
        })
        yield* repo.storeKnown({
          tourId: tour.id,
          at,
          fromPriceMinor: season.fromPriceMinor,
          currency: season.fromPriceMinor === null ? null : tour.currency,
          nextAvailableDate: season.nextAvailableDate
        })
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
      const dropped = options.tourId === undefined ? (yield* repo.dropUnlinked()).n : 0
      const tours = yield* repo.linkedTours(options.tourId)
      const byAccount = new Map<string, Array<SeasonTour>>()
      for (const t of tours) byAccount.set(t.account_id, [...(byAccount.get(t.account_id) ?? []), t])
      const perAccount = yield* Effect.forEach(
        [...byAccount],
        ([accountId, list]) =>
          refreshAccount(accountId, list).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logError(`season refresh of account ${accountId} failed`, cause),
                list.map((t) => ({
                  ...unknownResult(t.id, Cause.pretty(cause).split("\n")[0]!, "failed"),
                  skipped: false
                }))
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
      yield* annotateSpan({ tours: summary.tours, known: summary.known, unknown: summary.unknown })
      return summary
    })

    return { refresh } as const
  }),
  dependencies: [TourSeasonRepo.Default]
}) {}
