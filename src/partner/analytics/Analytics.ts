/**
 * The analytics reads of the operators a request acts for (spec §2 "Analytics tour row and surface",
 * "Site analytics"; docs/api/analytics.md): the daily rollups read (AnalyticsRepo, which applies the
 * visibility rule), revenue converted to EUR at each day's rate (src/rates/), rows and sites shaped by
 * ./rules.ts; all of it inside the limits (AnalyticsLimits: one slot of the key, the deadline).
 * Whether other-channel sales can be given is what issue 13's ledger coverage says (sales rules).
 */
import { Clock, Effect, Either } from "effect"
import { InvalidRequest, NotFound, Unavailable } from "../../domain/errors.js"
import { DailyRates } from "../../rates/DailyRates.js"
import { converterTo } from "../../rates/rules.js"
import { SalesConfig } from "../../sales/config.js"
import type { AuthenticatedKey } from "../auth/KeyAuth.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { ledgerGaps } from "../sales/rules.js"
import { SalesRepo } from "../sales/SalesRepo.js"
import { AnalyticsLimits, type Step } from "./AnalyticsLimits.js"
import { AnalyticsRepo } from "./AnalyticsRepo.js"
import type { AnalyticsSites, AnalyticsTours, SitesParams, ToursParams } from "./Api.js"
import * as rules from "./rules.js"
import * as siteRules from "./siteRules.js"

export interface AnalyticsRange {
  /** The key (its concurrency slots). */
  readonly keyId: string
  /** The operators in view, with their names. */
  readonly partners: ReadonlyArray<rules.Partner>
  readonly from: string
  readonly to: string
}

export interface ToursRequest extends AnalyticsRange {
  readonly granularity: rules.Granularity
  readonly tourId: string | undefined
  readonly surface: string | undefined
}

export interface SitesRequest extends AnalyticsRange {
  readonly site: string | undefined
}

const missingRate = (missing: ReadonlyArray<{ currency: string; day: string }>) => {
  const first = missing.slice(0, 3).map((m) => `${m.currency} on ${m.day}`).join(", ")
  return new Unavailable({
    detail: `no exchange rate to EUR for ${first}${missing.length > 3 ? " and more" : ""} yet; retry later`
  })
}

/** The key, its operators in view (`partner_id` narrows; 404 outside the key) and the checked range. */
const inView = (
  key: AuthenticatedKey,
  p: { readonly from: string; readonly to: string; readonly partner_id?: string | undefined }
) =>
  Effect.gen(function*() {
    const range = rules.checkAnalyticsRange(p.from, p.to)
    if (Either.isLeft(range)) return yield* new InvalidRequest(range.left)
    const operatorIds = yield* operatorIdsFor(key, p.partner_id)
    return {
      keyId: key.id,
      partners: key.partners.filter((k) => operatorIds.includes(k.id)),
      from: p.from,
      to: p.to
    }
  })

export class Analytics extends Effect.Service<Analytics>()("Partner/Analytics", {
  effect: Effect.gen(function*() {
    const repo = yield* AnalyticsRepo
    const salesRepo = yield* SalesRepo
    const rates = yield* DailyRates
    const limits = yield* AnalyticsLimits
    const salesConfig = yield* SalesConfig
    const staleAfterMs = salesConfig.ledgerStaleAfterMinutes * 60_000

    /** EUR minor units of an amount on a day, from the stored rates of the currencies seen. */
    const toEurFor = (step: Step, currencies: ReadonlyArray<string>, from: string, to: string) =>
      Effect.gen(function*() {
        const foreign = [...new Set(currencies)].filter((c) => c !== "EUR")
        const table = foreign.length === 0
          ? null
          : yield* step(rates.table({ currencies: [...foreign, "EUR"], from, to }))
        const toEur = table && converterTo(table, "EUR")
        return (amount: number, currency: string, day: string) =>
          currency === "EUR" ? amount : toEur && toEur(amount, currency, day)
      })

    const tours = Effect.fn("Analytics.tours")(function*(r: ToursRequest) {
      const operatorIds = r.partners.map((p) => p.id)
      return yield* limits.run(r.keyId, (step) =>
        Effect.gen(function*() {
          const owned = (yield* step(repo.visibleSites(operatorIds, undefined))).filter((s) => s.owner)
          // A surface names a site (its domain) or a channel (its id, never with a dot).
          const siteId = r.surface === undefined ? undefined : yield* step(repo.siteByDomain(r.surface))
          const onlyChannels = r.surface !== undefined && siteId === undefined
          const onlySite = siteId !== undefined
          const q = {
            operatorIds,
            ownedSiteIds: owned.map((s) => s.id),
            from: r.from,
            to: r.to,
            tourId: r.tourId,
            siteId,
            total: r.granularity === "total"
          }
          const funnels = onlyChannels ? [] : yield* step(repo.tourFunnels(q))
          const siteSales = onlyChannels ? [] : yield* step(repo.tourSiteSales(q))
          const accounts = yield* step(salesRepo.coverage(operatorIds))
          const now = new Date(yield* Clock.currentTimeMillis)
          const channelsAvailable = ledgerGaps(accounts, r, now, staleAfterMs).length === 0
          let channelSales = onlySite || !channelsAvailable ? [] : yield* step(repo.tourChannelSales(q))

          const toEur = yield* toEurFor(step, [...siteSales, ...channelSales].map((s) => s.currency), r.from, r.to)
          // Other-channel figures without a rate are left out whole (as GET /sales does); site rows must be complete.
          let otherChannelsAvailable = channelsAvailable
          if (channelSales.some((c) => toEur(c.revenue_minor, c.currency, c.day) === null)) {
            channelSales = []
            otherChannelsAvailable = false
          }

          const tourIds = [...new Set([...funnels, ...siteSales, ...channelSales].flatMap((x) => x.tour_id ?? []))]
          const tourList = tourIds.length === 0 ? [] : yield* step(repo.tours(tourIds))
          const tourById = new Map(tourList.map((t) => [t.id, { name: t.title, operatorId: t.operator_id }]))
          const siteIds = [...new Set([...funnels, ...siteSales].map((x) => x.site_id))]
          const siteList = siteIds.length === 0 ? [] : yield* step(repo.sitesByIds(siteIds))
          const siteById = new Map(siteList.map((s) => [s.id, s]))
          const names = new Map(r.partners.map((p) => [p.id, p.name]))
          const unnamed = [
            ...new Set([
              ...tourList.map((t) => t.operator_id),
              ...siteSales.map((s) => s.operator_id),
              ...channelSales.map((s) => s.operator_id)
            ])
          ].filter((id) => !names.has(id))
          if (unnamed.length > 0) { for (const o of yield* step(repo.operators(unnamed))) names.set(o.id, o.name) }

          const figures = rules.tourFigures({
            granularity: r.granularity,
            funnels,
            siteSales,
            channelSales,
            surfaceFilter: r.surface,
            toEur,
            lookups: {
              inView: new Set(operatorIds),
              site: (id) => siteById.get(id),
              tour: (id) => tourById.get(id),
              operator: (id) => ({ id, name: names.get(id) ?? id })
            }
          })
          if (Either.isLeft(figures)) return yield* missingRate(figures.left)
          return {
            from: r.from,
            to: r.to,
            granularity: r.granularity,
            currency: "EUR" as const,
            partners: [...r.partners].sort((a, b) => a.name.localeCompare(b.name)),
            rows: figures.right.rows,
            surfaces: figures.right.surfaces,
            other_channels_available: otherChannelsAvailable
          } satisfies AnalyticsTours
        }))
    })

    const sites = Effect.fn("Analytics.sites")(function*(r: SitesRequest) {
      const operatorIds = r.partners.map((p) => p.id)
      return yield* limits.run(r.keyId, (step) =>
        Effect.gen(function*() {
          const visible = yield* step(repo.visibleSites(operatorIds, r.site))
          if (r.site !== undefined && visible.length === 0) {
            return yield* new NotFound({
              detail: "site not found, or not one the key's operators are on (not found, or not yours)"
            })
          }
          if (visible.length === 0) return { from: r.from, to: r.to, currency: "EUR" as const, sites: [] }
          const ids = visible.map((s) => s.id)
          const owned = visible.filter((s) => s.owner).map((s) => s.id)
          const range = { from: r.from, to: r.to }
          const traffic = yield* step(repo.traffic(ids, range))
          const sources = yield* step(repo.sources(ids, range, rules.SOURCES_PER_DIMENSION))
          const funnels = owned.length === 0 ? [] : yield* step(repo.siteFunnels(owned, range))
          const sales = yield* step(repo.siteDaySales({
            ...range,
            ownedSiteIds: owned,
            addedSiteIds: visible.filter((s) => !s.owner).map((s) => s.id),
            operatorIds
          }))
          const toEur = yield* toEurFor(step, sales.map((s) => s.currency), r.from, r.to)
          const items = siteRules.siteItems({ visible, traffic, sources, funnels, sales, toEur })
          if (Either.isLeft(items)) return yield* missingRate(items.left)
          return { from: r.from, to: r.to, currency: "EUR" as const, sites: items.right } satisfies AnalyticsSites
        }))
    })

    /** GET /analytics/tours for a key (the REST handler and the assistant's `get_tour_analytics`). */
    const toursFor = (key: AuthenticatedKey, p: typeof ToursParams.Type) =>
      Effect.flatMap(
        inView(key, p),
        (base) =>
          tours({ ...base, granularity: p.granularity ?? "day", tourId: p.tour_id, surface: p.surface?.toLowerCase() })
      )

    /** GET /analytics/sites for a key (the REST handler and the assistant's `get_site_analytics`). */
    const sitesFor = (key: AuthenticatedKey, p: typeof SitesParams.Type) =>
      Effect.flatMap(inView(key, p), (base) => sites({ ...base, site: p.site?.toLowerCase() }))

    return { tours, sites, toursFor, sitesFor } as const
  }),
  dependencies: [AnalyticsRepo.Default, AnalyticsLimits.Default, SalesRepo.Default, DailyRates.Default]
}) {}
