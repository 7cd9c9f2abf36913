/** Local calendar days in IANA time zones (pure; no I/O). */
import { Either } from "effect"

const formatters = new Map<string, Intl.DateTimeFormat>()

const formatterFor = (timeZone: string) => {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    formatters.set(timeZone, f)
  }
  return f
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
