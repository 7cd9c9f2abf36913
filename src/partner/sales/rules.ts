/**
 * The sales summary's rules (spec §2 "Sales summary"; docs/api/sales.md), pure: the range rule, the
 * own-sales days and totals, whether the other-channel figures can be given, and their conversion.
 * Every total is the sum of the rows it totals, after conversion, so days add up to totals and
 * channels add up to totals to the minor unit.
 */
import { Either } from "effect"
import { checkDayRange } from "../../domain/localDay.js"
import { converterTo, type RateTable } from "../../rates/rules.js"

/** Longest range, in days with both ends counted (so `to` − `from` ≤ 365). */
export const SALES_MAX_DAYS = 366
export const SALES_CURRENCIES = ["NOK", "EUR"] as const
export type SalesCurrency = (typeof SALES_CURRENCIES)[number]

export const UNAVAILABLE_REASONS = ["refresh_failed", "not_read_yet", "not_covered", "stale", "rate_missing"] as const
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number]

export interface Partner {
  readonly id: string
  readonly name: string
}

export const checkSalesRange = (from: string, to: string) => checkDayRange(from, to, SALES_MAX_DAYS)

// ---------------------------------------------------------------------------------------------
// Own sales

export interface OwnDayRow {
  readonly day: string
  readonly currency: string
  readonly operator_id: string
  readonly bookings: number
  readonly revenue_minor: number
}

export interface OwnSalesTotal {
  currency: string
  partner: Partner
  revenue_minor: number
  bookings: number
}

/** Totals per currency and operator of the own-sales rows: by currency, then operator name. */
export const ownTotals = (rows: ReadonlyArray<OwnDayRow>, partnerOf: (operatorId: string) => Partner) => {
  const byOperator = new Map<string, Map<string, OwnSalesTotal>>()
  const totals: Array<OwnSalesTotal> = [] // in order of first appearance (the sort below is stable)
  for (const r of rows) {
    let byCurrency = byOperator.get(r.operator_id)
    if (byCurrency === undefined) byOperator.set(r.operator_id, byCurrency = new Map())
    let total = byCurrency.get(r.currency)
    if (total === undefined) {
      total = { currency: r.currency, partner: partnerOf(r.operator_id), revenue_minor: 0, bookings: 0 }
      byCurrency.set(r.currency, total)
      totals.push(total)
    }
    total.revenue_minor += r.revenue_minor
    total.bookings += r.bookings
  }
  return totals.sort((a, b) => a.currency.localeCompare(b.currency) || a.partner.name.localeCompare(b.partner.name))
}

/** Days as read (one per day, currency and operator, oldest first) and their totals per currency and operator. */
export const ownSales = (rows: ReadonlyArray<OwnDayRow>, partnerOf: (operatorId: string) => Partner) => ({
  days: rows.map((r) => ({
    date: r.day,
    revenue_minor: r.revenue_minor,
    bookings: r.bookings,
    currency: r.currency,
    partner: partnerOf(r.operator_id)
  })),
  totals: ownTotals(rows, partnerOf)
})

/** A number as JSON.stringify writes it. */
const jsonNumber = (n: number) => (Number.isFinite(n) ? String(n) : "null")

/**
 * `JSON.stringify(ownSales(rows, partnerOf).days)`, written directly: a year of days for ten
 * operators is 3,660 rows, and building an object per row to serialise it again was most of a
 * request's own work and garbage (bench/README.md, issue 13). Each operator's `partner` object,
 * each day and each currency is serialised once; test/partner/sales/rules.test.ts holds it to the
 * same text.
 */
export const ownDaysJson = (rows: ReadonlyArray<OwnDayRow>, partnerOf: (operatorId: string) => Partner) => {
  const partners = new Map<string, string>()
  const currencies = new Map<string, string>()
  let lastDay: string | undefined
  let dayJson = ""
  let json = "["
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!
    if (r.day !== lastDay) dayJson = JSON.stringify(lastDay = r.day)
    let currency = currencies.get(r.currency)
    if (currency === undefined) currencies.set(r.currency, currency = JSON.stringify(r.currency))
    let partner = partners.get(r.operator_id)
    if (partner === undefined) partners.set(r.operator_id, partner = JSON.stringify(partnerOf(r.operator_id)))
    json += `${i === 0 ? "" : ","}{"date":${dayJson},"revenue_minor":${jsonNumber(r.revenue_minor)},"bookings":${
      jsonNumber(r.bookings)
    },"currency":${currency},"partner":${partner}}`
  }
  return json + "]"
}

// ---------------------------------------------------------------------------------------------
// Whether other-channel figures can be given

/** What the sales ledger knows of one booking-system account (absent fields: never read). */
export interface LedgerCoverage {
  readonly account_id: string
  readonly operator_ids: ReadonlyArray<string>
  readonly covered_from: string | null
  readonly covered_until: Date | null
  readonly last_outcome: string | null
  readonly last_attempt_at: Date | null
}

export interface Gap {
  readonly operatorIds: ReadonlyArray<string>
  readonly reason: UnavailableReason
  readonly detail: string
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10)

/**
 * The reasons the ledger cannot give the figures of `[from, to]`, one per account at most: its last
 * read failed; it was never read completely; it starts after `from`; or the range reaches the day of
 * its last complete read and that read is older than `staleAfterMs`.
 */
export const ledgerGaps = (
  accounts: ReadonlyArray<LedgerCoverage>,
  range: { readonly from: string; readonly to: string },
  now: Date,
  staleAfterMs: number
): Array<Gap> =>
  accounts.flatMap((a): Array<Gap> => {
    const gap = (reason: UnavailableReason, detail: string) => [{ operatorIds: a.operator_ids, reason, detail }]
    if (a.last_outcome === "failed") {
      return gap(
        "refresh_failed",
        `the last read of the booking system${
          a.last_attempt_at ? ` (${a.last_attempt_at.toISOString()})` : ""
        } failed; figures come back after the next successful read`
      )
    }
    if (a.covered_from === null || a.covered_until === null) {
      return gap("not_read_yet", "the booking system's sales have not been read completely yet")
    }
    if (range.from < a.covered_from) {
      return gap("not_covered", `the booking system's sales are read from ${a.covered_from} on`)
    }
    if (range.to >= utcDay(a.covered_until) && now.getTime() - a.covered_until.getTime() > staleAfterMs) {
      return gap("stale", `the booking system's sales were last read completely at ${a.covered_until.toISOString()}`)
    }
    return []
  })

// ---------------------------------------------------------------------------------------------
// Other-channel figures

export interface ChannelDayRow {
  readonly day: string
  readonly label: string
  readonly currency: string
  readonly bookings: number
  readonly participants: number
  readonly revenue_minor: number
}

/** An amount of `currency` on `day` in the requested currency, or null without a rate. */
export type Convert = (amountMinor: number, currency: string, day: string) => number | null

export interface OtherChannelFigures {
  readonly days: Array<{ date: string; revenue_minor: number; bookings: number }>
  readonly channels: Array<{ label: string; revenue_minor: number; bookings: number; participants: number }>
  readonly totals: { revenue_minor: number; bookings: number; participants: number }
}

/**
 * Days (oldest first), channels (largest revenue first, then label) and totals from rows per day,
 * channel and line currency, each row converted once; Left lists the (currency, day) pairs without a rate.
 */
export const otherChannelFigures = (
  rows: ReadonlyArray<ChannelDayRow>,
  convert: Convert
): Either.Either<OtherChannelFigures, ReadonlyArray<{ currency: string; day: string }>> => {
  const days = new Map<string, { date: string; revenue_minor: number; bookings: number }>()
  const channels = new Map<string, { label: string; revenue_minor: number; bookings: number; participants: number }>()
  const totals = { revenue_minor: 0, bookings: 0, participants: 0 }
  const missing = new Map<string, { currency: string; day: string }>()
  for (const r of rows) {
    const revenue = convert(r.revenue_minor, r.currency, r.day)
    if (revenue === null) {
      missing.set(`${r.currency}|${r.day}`, { currency: r.currency, day: r.day })
      continue
    }
    const day = days.get(r.day) ?? { date: r.day, revenue_minor: 0, bookings: 0 }
    day.revenue_minor += revenue
    day.bookings += r.bookings
    days.set(r.day, day)
    const channel = channels.get(r.label) ?? { label: r.label, revenue_minor: 0, bookings: 0, participants: 0 }
    channel.revenue_minor += revenue
    channel.bookings += r.bookings
    channel.participants += r.participants
    channels.set(r.label, channel)
    totals.revenue_minor += revenue
    totals.bookings += r.bookings
    totals.participants += r.participants
  }
  if (missing.size > 0) return Either.left([...missing.values()])
  return Either.right({
    days: [...days.values()].sort((a, b) => a.date.localeCompare(b.date)),
    channels: [...channels.values()].sort((a, b) =>
      b.revenue_minor - a.revenue_minor || a.label.localeCompare(b.label)
    ),
    totals
  })
}

export const NO_FIGURES: OtherChannelFigures = {
  days: [],
  channels: [],
  totals: { revenue_minor: 0, bookings: 0, participants: 0 }
}

// ---------------------------------------------------------------------------------------------
// The answer

/** Line currencies that need a rate to give figures in `currency` (none when they are all in it). */
export const foreignCurrencies = (rows: ReadonlyArray<ChannelDayRow>, currency: string) =>
  [...new Set(rows.map((c) => c.currency))].filter((c) => c !== currency)

export interface SummaryInput {
  readonly from: string
  readonly to: string
  readonly currency: SalesCurrency
  /** The operators in view, with their names. */
  readonly partners: ReadonlyArray<Partner>
  readonly own: ReadonlyArray<OwnDayRow>
  readonly channelRows: ReadonlyArray<ChannelDayRow>
  readonly accounts: ReadonlyArray<LedgerCoverage>
  /** `ledgerGaps` of the accounts for the range. */
  readonly gaps: ReadonlyArray<Gap>
  /** The rates of `foreignCurrencies` (and `currency`), when there are gaps none, or no foreign line: null. */
  readonly table: RateTable | null
}

/** The operator of an id: the key's (with its name), or the id alone. */
const partnersOf = (partners: ReadonlyArray<Partner>) => {
  const byId = new Map(partners.map((p) => [p.id, p]))
  return (id: string): Partner => byId.get(id) ?? { id, name: id }
}

/** `other_channels` of the answer: converted figures, or `available: false` with the reasons. */
const otherChannels = (i: SummaryInput, partnerOf: (id: string) => Partner) => {
  let unavailable = i.gaps
  let figures = NO_FIGURES
  if (unavailable.length === 0) {
    const toCurrency = i.table && converterTo(i.table, i.currency)
    const converted = otherChannelFigures(
      i.channelRows,
      (amount, currency, day) => currency === i.currency ? amount : toCurrency && toCurrency(amount, currency, day)
    )
    if (Either.isRight(converted)) figures = converted.right
    else {
      const first = converted.left.slice(0, 3).map((m) => `${m.currency} on ${m.day}`).join(", ")
      unavailable = [{
        operatorIds: i.accounts.flatMap((a) => a.operator_ids),
        reason: "rate_missing",
        detail: `no exchange rate to ${i.currency} for ${first}${converted.left.length > 3 ? " and more" : ""}`
      }]
    }
  }
  const covered = [...new Set(i.accounts.flatMap((a) => a.operator_ids))].map(partnerOf)
  const untilTimes = i.accounts.map((a) => a.covered_until?.getTime() ?? null)
  const asOf = untilTimes.length === 0 || untilTimes.includes(null)
    ? null
    : new Date(Math.min(...(untilTimes as Array<number>))).toISOString()
  return {
    currency: i.currency,
    partners: covered.sort((a, b) => a.name.localeCompare(b.name)),
    available: unavailable.length === 0,
    as_of: asOf,
    ...(unavailable.length === 0 ? figures : NO_FIGURES),
    unavailable: unavailable.map((g) => ({
      partners: g.operatorIds.map(partnerOf),
      reason: g.reason,
      detail: g.detail
    }))
  }
}

/**
 * The sales summary: own sales as they are; other channels converted at each day's rate, or, when
 * the ledger has gaps or a rate is missing, `available: false` with the reasons and no figures.
 */
export const salesSummary = (i: SummaryInput) => {
  const partnerOf = partnersOf(i.partners)
  return {
    from: i.from,
    to: i.to,
    panion: ownSales(i.own, partnerOf),
    other_channels: otherChannels(i, partnerOf)
  }
}

/**
 * `JSON.stringify(salesSummary(i))`, the same text, with the own days (the bulk of a year's answer)
 * written directly by `ownDaysJson`: what GET /sales sends.
 */
export const salesSummaryJson = (i: SummaryInput): string => {
  const partnerOf = partnersOf(i.partners)
  return `{"from":${JSON.stringify(i.from)},"to":${JSON.stringify(i.to)},"panion":{"days":${
    ownDaysJson(i.own, partnerOf)
  },"totals":${JSON.stringify(ownTotals(i.own, partnerOf))}},"other_channels":${
    JSON.stringify(otherChannels(i, partnerOf))
  }}`
}
