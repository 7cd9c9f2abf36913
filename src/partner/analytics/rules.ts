/**
 * The analytics reads' rules (spec §1 "Analytics visibility rule", §2 "Analytics tour row and surface"
 * and "Site analytics"; docs/api/analytics.md), pure: the range rule, the channel surface id, the
 * conversion ratios, how rows of the daily rollups become tour rows and surfaces, and the site items.
 * Every total is the sum of the rows it totals (after each row's conversion to EUR), so totals add up.
 */
import { Either } from "effect"
import { type Dimension, DIMENSIONS } from "../../analytics/rules.js"
import { dayNumber } from "../../rates/rules.js"

/** `to` is at most this many days after `from` (spec §4, §8). */
export const ANALYTICS_MAX_DAYS_AFTER = 400
/** Sources listed per dimension (spec §8 "Site sources"). */
export const SOURCES_PER_DIMENSION = 25
/** Seconds a request refused for the concurrency limit is told to wait (`Retry-After`). */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1
export const GRANULARITIES = ["day", "total"] as const
export type Granularity = (typeof GRANULARITIES)[number]

export { type Dimension, DIMENSIONS }

export interface Partner {
  readonly id: string
  readonly name: string
}

/** `from` ≤ `to` and `to` at most ANALYTICS_MAX_DAYS_AFTER days after `from`. */
export const checkAnalyticsRange = (
  from: string,
  to: string
): Either.Either<number, { field: string; detail: string }> => {
  if (to < from) return Either.left({ field: "to", detail: "to must not be before from" })
  const after = (dayNumber(to) ?? 0) - (dayNumber(from) ?? 0)
  if (after > ANALYTICS_MAX_DAYS_AFTER) {
    return Either.left({
      field: "to",
      detail: `to is ${after} days after from; at most ${ANALYTICS_MAX_DAYS_AFTER}`
    })
  }
  return Either.right(after + 1)
}

/**
 * A channel surface's id: its label (the channel's title in the booking system) in lower case, accents
 * dropped, every run of other characters one `-`, at most 64 characters ("Viator" → `viator`,
 * "GetYourGuide Deutschland GmbH" → `getyourguide-deutschland-gmbh`). Never contains a dot, so it never
 * reads as a site domain. Labels that give the same id are one surface.
 */
export const channelSurfaceId = (label: string): string => {
  const slug = label
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "")
  return slug === "" ? "channel" : slug
}

// ---------------------------------------------------------------------------------------------
// Conversion ratios

export interface Funnel {
  readonly views: number
  readonly availability_checks: number
  readonly checkout_opens: number
  readonly checkout_attempts: number
}

export const EMPTY_FUNNEL: Funnel = { views: 0, availability_checks: 0, checkout_opens: 0, checkout_attempts: 0 }

export interface Conversion {
  readonly view_to_check: number | null
  readonly check_to_open: number | null
  readonly open_to_attempt: number | null
  readonly attempt_to_booking: number | null
  readonly view_to_booking: number | null
}

/** `part / whole`, rounded to 4 decimals; null when `whole` is zero (the step before had nobody). */
export const ratio = (part: number, whole: number): number | null =>
  whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000

export const conversionOf = (f: Funnel, bookings: number): Conversion => ({
  view_to_check: ratio(f.availability_checks, f.views),
  check_to_open: ratio(f.checkout_opens, f.availability_checks),
  open_to_attempt: ratio(f.checkout_attempts, f.checkout_opens),
  attempt_to_booking: ratio(bookings, f.checkout_attempts),
  view_to_booking: ratio(bookings, f.views)
})

/** A funnel a row or a surface total adds up in place. */
export type FunnelCounts = { -readonly [K in keyof Funnel]: Funnel[K] }

// ---------------------------------------------------------------------------------------------
// Tour rows and surfaces

export type Basis = "own_tour" | "site_owner"

export interface Surface {
  readonly type: "site" | "channel"
  readonly id: string
  readonly name: string
}

/** A funnel row of analytics_tour_daily, with the tour's operator (null when the tour is unknown). */
export interface FunnelRow {
  readonly site_id: string
  readonly tour_id: string
  readonly operator_id: string | null
  readonly day: string
  readonly views: number
  readonly availability_checks: number
  readonly checkout_opens: number
  readonly checkout_attempts: number
}

/** Checkout sales on a site (sales_own_daily), by tour, operator, day and booking currency. */
export interface SiteSalesRow {
  readonly site_id: string
  readonly tour_id: string | null
  readonly operator_id: string
  readonly day: string
  readonly currency: string
  readonly bookings: number
  readonly revenue_minor: number
}

/** Other-channel sales (sales_channel_daily), by tour, operator, label, day and line currency. */
export interface ChannelSalesRow {
  readonly tour_id: string | null
  readonly operator_id: string
  readonly label: string
  readonly day: string
  readonly currency: string
  readonly bookings: number
  readonly participants: number
  readonly revenue_minor: number
}

export interface TourRow {
  date: string | null
  surface: Surface
  tour: { id: string | null; name: string | null }
  operator: Partner | null
  basis: Basis
  funnel: FunnelCounts | null
  bookings: number
  participants: number | null
  revenue_minor: number
  conversion: Conversion | null
}

export interface SurfaceTotal {
  surface: Surface
  funnel: FunnelCounts | null
  bookings: number
  participants: number | null
  revenue_minor: number
  revenue_share: number
  conversion: Conversion | null
}

/** An amount of `currency` on `day` in EUR minor units, or null without a rate. */
export type ToEur = (amountMinor: number, currency: string, day: string) => number | null

export interface Lookups {
  /** The operators in view (the key's, or `partner_id`). */
  readonly inView: ReadonlySet<string>
  readonly site: (siteId: string) => { readonly domain: string; readonly name: string } | undefined
  readonly tour: (tourId: string) => { readonly name: string; readonly operatorId: string } | undefined
  readonly operator: (operatorId: string) => Partner
}

export interface TourFigures {
  readonly rows: Array<TourRow>
  readonly surfaces: Array<SurfaceTotal>
}

/**
 * Rows per tour, surface and UTC day (or per tour and surface when `granularity` is total) from the
 * rollups' rows, each sales row converted to EUR once; Left lists the (currency, day) pairs without a
 * rate. The rows given are already the visible ones (the repository applies the visibility rule);
 * `basis` is own_tour for a tour of an operator in view, else site_owner. `surfaceFilter` keeps only
 * the surface whose id it is (site domain or channel id).
 */
export const tourFigures = (input: {
  readonly granularity: Granularity
  readonly funnels: ReadonlyArray<FunnelRow>
  readonly siteSales: ReadonlyArray<SiteSalesRow>
  readonly channelSales: ReadonlyArray<ChannelSalesRow>
  readonly surfaceFilter: string | undefined
  readonly lookups: Lookups
  readonly toEur: ToEur
}): Either.Either<TourFigures, ReadonlyArray<{ currency: string; day: string }>> => {
  // A 400-day answer is tens of thousands of rows (bench/README.md, issue 14): one surface, tour name
  // and operator object per id (equal content, shared), funnels added in place, and a sort on
  // numbers and precomputed ranks that orders exactly as the localeCompare of the fields would.
  const { lookups: l } = input
  const missing = new Map<string, { currency: string; day: string }>()
  const byDay = input.granularity === "day"
  const keep = (surface: Surface) => input.surfaceFilter === undefined || surface.id === input.surfaceFilter

  const siteSurfaces = new Map<string, Surface>()
  const siteSurface = (siteId: string): Surface => {
    let surface = siteSurfaces.get(siteId)
    if (surface === undefined) {
      const site = l.site(siteId)
      surface = { type: "site", id: site?.domain ?? siteId, name: site?.name ?? siteId }
      siteSurfaces.set(siteId, surface)
    }
    return surface
  }
  const operators = new Map<string, Partner>()
  const operatorOf = (id: string) => {
    let operator = operators.get(id)
    if (operator === undefined) operators.set(id, operator = l.operator(id))
    return operator
  }
  // Rows by surface, then tour (or, for sales of no known tour, operator), then date: short keys of
  // shared strings, in place of one long key string per input row.
  const rowsOf = new Map<Surface, Map<string, Map<string, TourRow>>>()
  const list: Array<TourRow> = []
  const rowFor = (surface: Surface, tourId: string | null, operatorId: string | null, day: string, site: boolean) => {
    const date = byDay ? day : null
    let byTour = rowsOf.get(surface)
    if (byTour === undefined) rowsOf.set(surface, byTour = new Map())
    const tourKey = tourId ?? `|${operatorId ?? ""}`
    let byDate = byTour.get(tourKey)
    if (byDate === undefined) byTour.set(tourKey, byDate = new Map())
    let row = byDate.get(date ?? "")
    if (row === undefined) {
      const tour = tourId === null ? undefined : l.tour(tourId)
      const owner = tour?.operatorId ?? operatorId
      row = {
        date,
        surface,
        tour: { id: tourId, name: tour?.name ?? null },
        operator: owner === null ? null : operatorOf(owner),
        basis: owner !== null && l.inView.has(owner) ? "own_tour" : "site_owner",
        funnel: site ? { ...EMPTY_FUNNEL } : null,
        bookings: 0,
        participants: site ? null : 0,
        revenue_minor: 0,
        conversion: null
      }
      byDate.set(date ?? "", row)
      list.push(row)
    }
    return row
  }

  for (const f of input.funnels) {
    const surface = siteSurface(f.site_id)
    if (!keep(surface)) continue
    const funnel = rowFor(surface, f.tour_id, f.operator_id, f.day, true).funnel!
    funnel.views += f.views
    funnel.availability_checks += f.availability_checks
    funnel.checkout_opens += f.checkout_opens
    funnel.checkout_attempts += f.checkout_attempts
  }
  for (const s of input.siteSales) {
    const surface = siteSurface(s.site_id)
    if (!keep(surface)) continue
    const revenue = input.toEur(s.revenue_minor, s.currency, s.day)
    if (revenue === null) {
      missing.set(`${s.currency}|${s.day}`, { currency: s.currency, day: s.day })
      continue
    }
    const row = rowFor(surface, s.tour_id, s.operator_id, s.day, true)
    row.bookings += s.bookings
    row.revenue_minor += revenue
  }
  // Labels that give one id are one surface, named by the first of them in code-point order (the same
  // name whatever the order of the rows).
  const idOfLabel = new Map<string, string>()
  const channelNames = new Map<string, string>()
  for (const c of input.channelSales) {
    let id = idOfLabel.get(c.label)
    if (id === undefined) idOfLabel.set(c.label, id = channelSurfaceId(c.label))
    const known = channelNames.get(id)
    if (known === undefined || c.label < known) channelNames.set(id, c.label)
  }
  const channelSurfaces = new Map<string, Surface>()
  for (const [id, name] of channelNames) channelSurfaces.set(id, { type: "channel", id, name })
  for (const c of input.channelSales) {
    const surface = channelSurfaces.get(idOfLabel.get(c.label)!)!
    if (!keep(surface)) continue
    const revenue = input.toEur(c.revenue_minor, c.currency, c.day)
    if (revenue === null) {
      missing.set(`${c.currency}|${c.day}`, { currency: c.currency, day: c.day })
      continue
    }
    const row = rowFor(surface, c.tour_id, c.operator_id, c.day, false)
    row.bookings += c.bookings
    row.participants = (row.participants ?? 0) + c.participants
    row.revenue_minor += revenue
  }
  if (missing.size > 0) return Either.left([...missing.values()])

  for (const row of list) row.conversion = row.funnel === null ? null : conversionOf(row.funnel, row.bookings)
  const surfaceRank = localeRanks(list.map((r) => r.surface.id))
  const nameRank = localeRanks(list.map((r) => r.tour.name ?? ""))
  const idRank = localeRanks(list.map((r) => r.tour.id ?? ""))
  // Dates are all null (total) or all YYYY-MM-DD, where localeCompare is code-point order.
  list.sort((a, b) =>
    (a.date === b.date ? 0 : (a.date ?? "") < (b.date ?? "") ? -1 : 1) ||
    (a.surface.type === b.surface.type ? 0 : a.surface.type === "site" ? -1 : 1) ||
    surfaceRank.get(a.surface.id)! - surfaceRank.get(b.surface.id)! ||
    b.revenue_minor - a.revenue_minor ||
    nameRank.get(a.tour.name ?? "")! - nameRank.get(b.tour.name ?? "")! ||
    idRank.get(a.tour.id ?? "")! - idRank.get(b.tour.id ?? "")!
  )
  return Either.right({ rows: list, surfaces: surfacesOf(list) })
}

/**
 * Each distinct string's place in localeCompare order (strings localeCompare finds equal share one),
 * so that comparing two places orders as `a.localeCompare(b)` would, with one localeCompare per
 * distinct string pair of the sort instead of one per row pair.
 */
const localeRanks = (values: ReadonlyArray<string>): Map<string, number> => {
  const distinct = [...new Set(values)].sort((a, b) => a.localeCompare(b))
  const ranks = new Map<string, number>()
  let rank = 0
  distinct.forEach((v, i) => {
    if (i > 0 && distinct[i - 1]!.localeCompare(v) !== 0) rank++
    ranks.set(v, rank)
  })
  return ranks
}

/** Rows summed per surface, largest revenue first, with each surface's share of the revenue (0 when none). */
export const surfacesOf = (rows: ReadonlyArray<TourRow>): Array<SurfaceTotal> => {
  const bySurface = { site: new Map<string, SurfaceTotal>(), channel: new Map<string, SurfaceTotal>() }
  for (const r of rows) {
    const ofType = bySurface[r.surface.type]
    const total = ofType.get(r.surface.id) ?? {
      surface: r.surface,
      funnel: r.funnel === null ? null : { ...EMPTY_FUNNEL },
      bookings: 0,
      participants: r.participants === null ? null : 0,
      revenue_minor: 0,
      revenue_share: 0,
      conversion: null
    }
    if (total.funnel !== null && r.funnel !== null) {
      total.funnel.views += r.funnel.views
      total.funnel.availability_checks += r.funnel.availability_checks
      total.funnel.checkout_opens += r.funnel.checkout_opens
      total.funnel.checkout_attempts += r.funnel.checkout_attempts
    }
    total.bookings += r.bookings
    if (total.participants !== null) total.participants += r.participants ?? 0
    total.revenue_minor += r.revenue_minor
    ofType.set(r.surface.id, total)
  }
  const totals = [...bySurface.site.values(), ...bySurface.channel.values()]
  const revenue = totals.reduce((n, t) => n + t.revenue_minor, 0)
  for (const t of totals) {
    t.revenue_share = revenue === 0 ? 0 : Math.round((t.revenue_minor / revenue) * 10_000) / 10_000
    t.conversion = t.funnel === null ? null : conversionOf(t.funnel, t.bookings)
  }
  return totals.sort((a, b) =>
    b.revenue_minor - a.revenue_minor || a.surface.type.localeCompare(b.surface.type) * -1 ||
    a.surface.id.localeCompare(b.surface.id)
  )
}
