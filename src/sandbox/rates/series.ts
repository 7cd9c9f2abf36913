/**
 * The rates sandbox's fixtures: a deterministic series per currency for every banking day within
 * two years either side of today. A banking day is a weekday that is not one of a fixed list of
 * holidays (Norwegian bank holidays and the TARGET closing days: 1 January, Maundy Thursday, Good
 * Friday, Easter Monday, 1 May, 17 May, Ascension Day, Whit Monday, 24–26 and 31 December); the
 * sandbox uses one calendar for both sources. A value depends only on the currency and the day,
 * so every test and every demo start sees the same rates.
 *
 * Norges Bank quotes NOK per 1 unit (EUR, USD, GBP: UNIT_MULT 0) or per 100 units (SEK, DKK:
 * UNIT_MULT 2), with 4 decimals; the ECB quotes units per euro, with 4 decimals, derived here from
 * the same NOK values (so both sources agree to within their rounding).
 */

export interface SeriesSpec {
  /** NOK per quoted unit around which the series moves. */
  readonly level: number
  /** Norges Bank's UNIT_MULT: the value is NOK per 10^unitMult units. */
  readonly unitMult: number
  readonly phase: number
}

export const SERIES: Readonly<Record<string, SeriesSpec>> = {
  EUR: { level: 11.5, unitMult: 0, phase: 0.3 },
  USD: { level: 10.6, unitMult: 0, phase: 1.1 },
  GBP: { level: 13.4, unitMult: 0, phase: 2.2 },
  SEK: { level: 98.5, unitMult: 2, phase: 3.7 },
  DKK: { level: 154.2, unitMult: 2, phase: 4.9 }
}

export const SANDBOX_CURRENCIES = Object.keys(SERIES).sort()

/** Days either side of today that the sandbox has rates for. */
export const WINDOW_DAYS = 730

const DAY_MS = 86_400_000

export const dayNumber = (day: string) => Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS)
export const dayOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10)
export const addDays = (day: string, days: number) => dayOf(dayNumber(day) + days)

/** Easter Sunday (Gregorian, the anonymous algorithm) as a day number. */
const easter = (year: number) => {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const month = Math.floor((h + l - 7 * m + 114) / 31)
  const date = ((h + l - 7 * m + 114) % 31) + 1
  return dayNumber(`${year}-${String(month).padStart(2, "0")}-${String(date).padStart(2, "0")}`)
}

const holidayCache = new Map<number, ReadonlySet<number>>()

/** The sandbox's holidays of a year, as day numbers. */
export const holidays = (year: number): ReadonlySet<number> => {
  const cached = holidayCache.get(year)
  if (cached) return cached
  const fixed = ["01-01", "05-01", "05-17", "12-24", "12-25", "12-26", "12-31"].map((md) => dayNumber(`${year}-${md}`))
  const e = easter(year)
  const moving = [e - 3, e - 2, e + 1, e + 39, e + 50]
  const set = new Set([...fixed, ...moving])
  holidayCache.set(year, set)
  return set
}

export const isBankingDay = (day: string) => {
  const n = dayNumber(day)
  const weekday = new Date(n * DAY_MS).getUTCDay()
  if (weekday === 0 || weekday === 6) return false
  return !holidays(Number(day.slice(0, 4))).has(n)
}

/** Norges Bank's value for a currency on a banking day: NOK per 10^unitMult units, 4 decimals. */
export const norgesBankValue = (currency: string, day: string): number | null => {
  const spec = SERIES[currency]
  if (spec === undefined || !isBankingDay(day)) return null
  const n = dayNumber(day)
  const wave = 0.03 * Math.sin(n / 61 + spec.phase) + 0.008 * Math.sin(n / 7.3 + 2 * spec.phase)
  return Number((spec.level * (1 + wave)).toFixed(4))
}

/** NOK for one unit, as the service should store it from Norges Bank. */
export const nokPerUnit = (currency: string, day: string): number | null => {
  const value = norgesBankValue(currency, day)
  return value === null ? null : Number((value / 10 ** SERIES[currency]!.unitMult).toFixed(10))
}

/** The ECB's value: units of `currency` (NOK included) for one euro, 4 decimals. */
export const ecbValue = (currency: string, day: string): number | null => {
  const nokPerEur = nokPerUnit("EUR", day)
  if (nokPerEur === null) return null
  if (currency === "NOK") return nokPerEur
  const nok = nokPerUnit(currency, day)
  return nok === null || currency === "EUR" ? null : Number((nokPerEur / nok).toFixed(4))
}

/** The banking days in [from, to] that lie inside the sandbox's window around `today`. */
export const bankingDays = (from: string, to: string, today: string): Array<string> => {
  const start = Math.max(dayNumber(from), dayNumber(today) - WINDOW_DAYS)
  const end = Math.min(dayNumber(to), dayNumber(today) + WINDOW_DAYS)
  const days: Array<string> = []
  for (let n = start; n <= end; n++) {
    const day = dayOf(n)
    if (isBankingDay(day)) days.push(day)
  }
  return days
}
