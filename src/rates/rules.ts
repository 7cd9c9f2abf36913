/**
 * Exchange-rate rules (pure; docs/exchange-rates.md): which stored rate a day uses, and converting
 * integer minor units between currencies through NOK.
 *
 * - A day uses its own rate, or the latest earlier day's within `lookbackDays` (a weekend or a
 *   holiday has no rate of its own; a rate published late is used as soon as it is stored, with
 *   nothing to rebuild). Past the lookback there is no rate: the figure is unavailable, never a guess.
 * - NOK is 1 on every day; a conversion between the same currency leaves the amount as it is.
 * - Amounts are integer minor units of each currency's own minor digits (ISO 4217 through Intl:
 *   NOK 2, EUR 2, JPY 0 …), rounded half away from zero once, at the end.
 */

export interface RateRow {
  readonly currency: string
  /** ISO date of the banking day. */
  readonly day: string
  /** NOK for one unit of `currency`. */
  readonly nokPerUnit: number
}

export interface RateTable {
  readonly lookbackDays: number
  /** NOK for one unit of `currency` on `day`: its own rate or the latest within the lookback; NOK → 1. */
  readonly nokPerUnit: (currency: string, day: string) => number | null
}

export const DEFAULT_LOOKBACK_DAYS = 7

const DAY_MS = 86_400_000
const DAY = /^\d{4}-\d{2}-\d{2}$/

/** Days since 1970-01-01 of an ISO date; null when it is not one. */
export const dayNumber = (day: string): number | null => {
  if (!DAY.test(day)) return null
  const ms = Date.parse(`${day}T00:00:00Z`)
  return Number.isNaN(ms) ? null : Math.round(ms / DAY_MS)
}

export const addDays = (day: string, days: number) =>
  new Date((dayNumber(day) ?? 0) * DAY_MS + days * DAY_MS).toISOString().slice(0, 10)

export const makeRateTable = (rows: ReadonlyArray<RateRow>, lookbackDays = DEFAULT_LOOKBACK_DAYS): RateTable => {
  // Per currency: days ascending with their rates, for a binary search.
  const byCurrency = new Map<string, { days: Array<number>; rates: Array<number> }>()
  const sorted = rows
    .map((r) => ({ currency: r.currency.trim().toUpperCase(), n: dayNumber(r.day), rate: r.nokPerUnit }))
    .filter((r): r is { currency: string; n: number; rate: number } =>
      r.n !== null && Number.isFinite(r.rate) && r.rate > 0
    )
    .sort((a, b) => a.n - b.n)
  for (const r of sorted) {
    const series = byCurrency.get(r.currency) ?? { days: [], rates: [] }
    if (series.days[series.days.length - 1] === r.n) series.rates[series.rates.length - 1] = r.rate
    else {
      series.days.push(r.n)
      series.rates.push(r.rate)
    }
    byCurrency.set(r.currency, series)
  }
  // A table converts many amounts of few days (an analytics answer: tens of thousands of rows, 400 days).
  const dayNumbers = new Map<string, number | null>()
  const nokPerUnit = (currency: string, day: string): number | null => {
    const code = currency.trim().toUpperCase()
    let n = dayNumbers.get(day)
    if (n === undefined) {
      n = dayNumber(day)
      if (dayNumbers.size < 10_000) dayNumbers.set(day, n)
    }
    if (n === null) return null
    if (code === "NOK") return 1
    const series = byCurrency.get(code)
    if (series === undefined) return null
    // The last index whose day is <= n.
    let lo = 0
    let hi = series.days.length - 1
    let found = -1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (series.days[mid]! <= n) {
        found = mid
        lo = mid + 1
      } else hi = mid - 1
    }
    if (found < 0 || n - series.days[found]! > lookbackDays) return null
    return series.rates[found]!
  }
  return { lookbackDays, nokPerUnit }
}

const minorDigitsCache = new Map<string, number | null>()

/** A currency's minor digits (ISO 4217, through Intl); null for a code that is not one. */
export const minorDigits = (currency: string): number | null => {
  const code = currency.trim().toUpperCase()
  const cached = minorDigitsCache.get(code)
  if (cached !== undefined) return cached
  let digits: number | null = null
  if (/^[A-Z]{3}$/.test(code)) {
    try {
      digits = new Intl.NumberFormat("en", { style: "currency", currency: code }).resolvedOptions()
        .maximumFractionDigits ?? null
    } catch {
      digits = null
    }
  }
  minorDigitsCache.set(code, digits)
  return digits
}

/** Half away from zero, after dropping binary noise far below a minor unit (2.4999999999 is 2.5). */
export const roundHalfAwayFromZero = (value: number) => {
  const clean = Number(value.toFixed(6))
  return Math.sign(clean) * Math.round(Math.abs(clean)) + 0 // + 0: no -0
}

/**
 * How `from` converts to `to` on `day`: a function of the amount in minor units, or null when a rate
 * is missing (or a code is not a currency). The identity for the same currency.
 */
export const conversionOn = (
  table: RateTable,
  from: string,
  to: string,
  day: string
): ((amountMinor: number) => number) | null => {
  const source = from.trim().toUpperCase()
  const target = to.trim().toUpperCase()
  if (source === target) return identity
  const fromDigits = minorDigits(source)
  const toDigits = minorDigits(target)
  if (fromDigits === null || toDigits === null) return null
  const fromRate = table.nokPerUnit(source, day)
  const toRate = table.nokPerUnit(target, day)
  if (fromRate === null || toRate === null) return null
  const scale = 10 ** toDigits
  const divisor = toRate * 10 ** fromDigits
  return (amountMinor) => roundHalfAwayFromZero((amountMinor * fromRate * scale) / divisor)
}

const identity = (amountMinor: number) => amountMinor

/**
 * `amountMinor` of `from` in integer minor units of `to`, at the rates `day` uses; the amount
 * unchanged for the same currency; null when a rate is missing (or a code is not a currency).
 */
export const convertMinor = (
  table: RateTable,
  amountMinor: number,
  from: string,
  to: string,
  day: string
): number | null => {
  const conversion = conversionOn(table, from, to, day)
  return conversion === null ? null : conversion(amountMinor)
}

/**
 * `convertMinor` into `to` for many amounts: each (currency, day)'s rates are looked up once (a
 * year of channel rows repeats each pair for every channel), the arithmetic is the same.
 */
export const converterTo = (table: RateTable, to: string) => {
  const byCurrency = new Map<string, Map<string, ((amountMinor: number) => number) | null>>()
  return (amountMinor: number, from: string, day: string): number | null => {
    let byDay = byCurrency.get(from)
    if (byDay === undefined) byCurrency.set(from, byDay = new Map())
    let conversion = byDay.get(day)
    if (conversion === undefined) byDay.set(day, conversion = conversionOn(table, from, to, day))
    return conversion === null ? null : conversion(amountMinor)
  }
}
