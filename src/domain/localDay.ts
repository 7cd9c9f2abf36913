/** Local calendar days in IANA time zones (pure; no I/O). */
import { Either } from "effect"

/**
 * Formatters made once per zone (in `cache`): building an Intl.DateTimeFormat costs far more than
 * formatting with it, and the slot and availability reads format once per departure (bench/README.md).
 */
const cachedFormatter =
  (options: Intl.DateTimeFormatOptions, cache = new Map<string, Intl.DateTimeFormat>()) => (timeZone: string) => {
    let f = cache.get(timeZone)
    if (!f) {
      f = new Intl.DateTimeFormat("en-CA", { ...options, timeZone })
      cache.set(timeZone, f)
    }
    return f
  }

const formatterFor = cachedFormatter({ year: "numeric", month: "2-digit", day: "2-digit" })
const minuteFormatterFor = cachedFormatter({
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23"
})

/** Local `YYYY-MM-DDTHH:MM` at `at` in `timeZone` (comparable as a string). */
export const localMinuteAt = (timeZone: string, at: Date): string => {
  const parts = minuteFormatterFor(timeZone).formatToParts(at)
  const get = (type: string) => parts.find((p) => p.type === type)!.value
  return `${get("year")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}`
}

/** Whether `timeZone` is a time zone this runtime knows (an IANA name such as Europe/Oslo, or UTC). */
export const isTimeZone = (timeZone: string): boolean => {
  try {
    formatterFor(timeZone)
    return true
  } catch {
    return false
  }
}

/** The local day `YYYY-MM-DD` in `timeZone` at the instant `at`. */
export const localDayAt = (timeZone: string, at: Date): string => {
  const parts = formatterFor(timeZone).formatToParts(at)
  const get = (type: string) => parts.find((p) => p.type === type)!.value
  return `${get("year")}-${get("month")}-${get("day")}`
}

/** `day` plus `n` calendar days (n may be negative). */
export const addDays = (day: string, n: number): string => {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number]
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10)
}

/** Every day from `from` to `to`, inclusive. */
export const daysBetween = (from: string, to: string): Array<string> => {
  const days: Array<string> = []
  for (let day = from; day <= to; day = addDays(day, 1)) days.push(day)
  return days
}

/**
 * The window of departure days to mirror for operators in these time zones: from the earliest
 * "today" among them to the latest "today" plus `daysAhead`.
 */
export const mirrorWindow = (timeZones: ReadonlyArray<string>, at: Date, daysAhead: number) => {
  const todays = timeZones.map((tz) => localDayAt(tz, at)).sort()
  return { from: todays[0]!, to: addDays(todays[todays.length - 1]!, daysAhead) }
}

/** Days from `from` to `to`, both included (0 when `to` is before `from`). */
export const dayCount = (from: string, to: string) =>
  to < from ? 0 : Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1

/** A `from`/`to` range rule: `to` not before `from`, at most `maxDays` days with both ends; Left names the rule. */
export const checkDayRange = (
  from: string,
  to: string,
  maxDays: number
): Either.Either<number, { field: string; detail: string }> => {
  if (to < from) return Either.left({ field: "to", detail: "to must not be before from" })
  const days = dayCount(from, to)
  if (days > maxDays) {
    return Either.left({
      field: "to",
      detail: `the range covers ${days} days; at most ${maxDays} (from and to included)`
    })
  }
  return Either.right(days)
}
