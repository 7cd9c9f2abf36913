/**
 * The rules of GET /api/v1/analytics/sites (spec §2 "Site analytics"), pure: a site item from its
 * daily rows (traffic, days, sources, the funnel and sales within its scope, in EUR), and the items
 * of every visible site. The tours' rules and the vocabulary both use are in ./rules.ts.
 */
import { Either } from "effect"
import { type Dimension, DIMENSIONS } from "../../analytics/rules.js"
import { EMPTY_FUNNEL, type Funnel, ratio, type ToEur } from "./rules.js"

export type Role = "owner" | "added"

/** A site the operators in view are on: as its owner, or only added to it. */
export interface VisibleSite {
  readonly id: string
  readonly domain: string
  readonly name: string
  readonly owner: boolean
}

export interface TrafficDayRow {
  readonly site_id: string
  readonly day: string
  readonly visitors: number
  readonly new_visitors: number
  readonly sessions: number
  readonly pageviews: number
  readonly bounces: number
  readonly duration_seconds: number
}

export interface SourceRow {
  readonly site_id: string
  readonly dimension: string
  readonly label: string
  readonly visitors: number
  readonly conversions: number
  readonly revenue_eur_minor: number
}

export interface SiteFunnelRow extends Funnel {
  readonly site_id: string
}

/** Checkout sales of a site within its sales scope, by day and booking currency. */
export interface SiteDaySalesRow {
  readonly site_id: string
  readonly day: string
  readonly currency: string
  readonly bookings: number
  readonly revenue_minor: number
}

export interface SiteItem {
  domain: string
  name: string
  role: Role
  sales_scope: "all_tours" | "own_tours"
  traffic: {
    visitors: number
    new_visitors: number
    sessions: number
    pageviews: number
    bounce_rate: number | null
    avg_session_seconds: number
  }
  days: Array<{
    date: string
    visitors: number
    new_visitors: number
    pageviews: number
    bookings: number
    revenue_minor: number
  }>
  sources: Array<{
    dimension: Dimension
    label: string
    visitors: number
    conversions: number | null
    revenue_minor: number | null
  }>
  funnel: Array<{ step: string; unit: "visitors" | "bookings"; count: number }> | null
  sales: { bookings: number; revenue_minor: number }
}

/**
 * One site item: traffic and days from the daily rows (days with traffic or sales, oldest first;
 * traffic is the sum of the days), sources as ranked (figures of conversions only for owners), the
 * funnel for owners, sales within the scope converted to EUR at each day's rate (Left: pairs without one).
 */
export const siteItem = (input: {
  readonly site: VisibleSite
  readonly traffic: ReadonlyArray<TrafficDayRow>
  readonly sources: ReadonlyArray<SourceRow>
  readonly funnel: Funnel | undefined
  readonly sales: ReadonlyArray<SiteDaySalesRow>
  readonly toEur: ToEur
}): Either.Either<SiteItem, ReadonlyArray<{ currency: string; day: string }>> => {
  const { site } = input
  const days = new Map<string, SiteItem["days"][number]>()
  const dayOf = (date: string) => {
    const d = days.get(date) ?? { date, visitors: 0, new_visitors: 0, pageviews: 0, bookings: 0, revenue_minor: 0 }
    days.set(date, d)
    return d
  }
  const traffic = { visitors: 0, new_visitors: 0, sessions: 0, pageviews: 0, bounces: 0, duration: 0 }
  for (const t of input.traffic) {
    const d = dayOf(t.day)
    d.visitors += t.visitors
    d.new_visitors += t.new_visitors
    d.pageviews += t.pageviews
    traffic.visitors += t.visitors
    traffic.new_visitors += t.new_visitors
    traffic.sessions += t.sessions
    traffic.pageviews += t.pageviews
    traffic.bounces += t.bounces
    traffic.duration += t.duration_seconds
  }
  const missing = new Map<string, { currency: string; day: string }>()
  const sales = { bookings: 0, revenue_minor: 0 }
  for (const s of input.sales) {
    const revenue = input.toEur(s.revenue_minor, s.currency, s.day)
    if (revenue === null) {
      missing.set(`${s.currency}|${s.day}`, { currency: s.currency, day: s.day })
      continue
    }
    const d = dayOf(s.day)
    d.bookings += s.bookings
    d.revenue_minor += revenue
    sales.bookings += s.bookings
    sales.revenue_minor += revenue
  }
  if (missing.size > 0) return Either.left([...missing.values()])

  const rank = (d: string) => DIMENSIONS.indexOf(d as Dimension)
  const sources = input.sources
    .filter((s) => rank(s.dimension) >= 0)
    .map((s) => ({
      dimension: s.dimension as Dimension,
      label: s.label,
      visitors: s.visitors,
      conversions: site.owner ? s.conversions : null,
      revenue_minor: site.owner ? s.revenue_eur_minor : null
    }))
    .sort((a, b) => rank(a.dimension) - rank(b.dimension) || b.visitors - a.visitors || a.label.localeCompare(b.label))

  const f = input.funnel ?? EMPTY_FUNNEL
  return Either.right({
    domain: site.domain,
    name: site.name,
    role: site.owner ? "owner" : "added",
    sales_scope: site.owner ? "all_tours" : "own_tours",
    traffic: {
      visitors: traffic.visitors,
      new_visitors: traffic.new_visitors,
      sessions: traffic.sessions,
      pageviews: traffic.pageviews,
      bounce_rate: ratio(traffic.bounces, traffic.sessions),
      avg_session_seconds: traffic.sessions === 0 ? 0 : Math.round((traffic.duration / traffic.sessions) * 10) / 10
    },
    days: [...days.values()].sort((a, b) => a.date.localeCompare(b.date)),
    sources,
    funnel: site.owner
      ? [
        { step: "visitors", unit: "visitors", count: traffic.visitors },
        { step: "tour_views", unit: "visitors", count: f.views },
        { step: "availability_checks", unit: "visitors", count: f.availability_checks },
        { step: "checkout_opens", unit: "visitors", count: f.checkout_opens },
        { step: "checkout_attempts", unit: "visitors", count: f.checkout_attempts },
        { step: "bookings", unit: "bookings", count: sales.bookings }
      ]
      : null,
    sales
  })
}

/** Rows grouped by their site. */
export const bySite = <A extends { readonly site_id: string }>(rows: ReadonlyArray<A>) => {
  const m = new Map<string, Array<A>>()
  for (const r of rows) {
    const g = m.get(r.site_id)
    if (g) g.push(r)
    else m.set(r.site_id, [r])
  }
  return m
}

/** The item of every visible site, in their order (Left: the first (currency, day) pairs without a rate). */
export const siteItems = (input: {
  readonly visible: ReadonlyArray<VisibleSite>
  readonly traffic: ReadonlyArray<TrafficDayRow>
  readonly sources: ReadonlyArray<SourceRow>
  readonly funnels: ReadonlyArray<SiteFunnelRow>
  readonly sales: ReadonlyArray<SiteDaySalesRow>
  readonly toEur: ToEur
}): Either.Either<Array<SiteItem>, ReadonlyArray<{ currency: string; day: string }>> => {
  const [trafficOf, sourcesOf, salesOf] = [bySite(input.traffic), bySite(input.sources), bySite(input.sales)]
  const funnelOf = new Map(input.funnels.map((f) => [f.site_id, f]))
  const items: Array<SiteItem> = []
  for (const site of input.visible) {
    const item = siteItem({
      site,
      traffic: trafficOf.get(site.id) ?? [],
      sources: sourcesOf.get(site.id) ?? [],
      funnel: funnelOf.get(site.id),
      sales: salesOf.get(site.id) ?? [],
      toEur: input.toEur
    })
    if (Either.isLeft(item)) return Either.left(item.left)
    items.push(item.right)
  }
  return Either.right(items)
}
