/** Date and time parameter schemas with messages that name the rule. */
import { Schema } from "effect"

const isCalendarDate = (s: string) => {
  const [y, m, d] = s.split("-").map(Number) as [number, number, number]
  const date = new Date(Date.UTC(y, m - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
}

/**
 * The last day a request may name: day arithmetic (a range, its chunks, the day after) must stay in
 * four-digit years, where `YYYY-MM-DD` strings sort as the days do. `9999-12-31` answered 500.
 */
export const LAST_DAY = "9998-12-31"

/** A calendar day `YYYY-MM-DD`, at most LAST_DAY. */
export const IsoDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "must be a date YYYY-MM-DD" }),
  Schema.filter(isCalendarDate, { message: () => "must be a real calendar date" }),
  Schema.filter((s) => s <= LAST_DAY, { message: () => `must be a day up to ${LAST_DAY}` })
).annotations({
  identifier: "Date",
  jsonSchema: {
    type: "string",
    format: "date",
    pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    maxLength: 10,
    example: "2026-11-21"
  }
})

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/

/** A timestamp with `Z` or an explicit offset, decoded to a JS Date. */
export const IsoDateTimeWithOffset = Schema.String.pipe(
  Schema.filter((s) => {
    const m = RFC3339.exec(s)
    return m !== null && isCalendarDate(m[1]!) && Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4]) < 60 &&
      !Number.isNaN(Date.parse(s))
  }, { message: () => "must be a date-time with Z or an offset, e.g. 2026-11-21T08:00:00Z" })
).annotations({
  identifier: "DateTime",
  // The longest RFC3339 form accepted: 2026-11-21T08:00:00.123456789+01:00.
  jsonSchema: { type: "string", format: "date-time", maxLength: 35 }
})

/** A wall-clock time `HH:MM` (24 hour, 00:00 to 23:59) in a request. */
export const IsoLocalTime = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$/, { message: () => "must be a time HH:MM from 00:00 to 23:59" })
).annotations({
  jsonSchema: { type: "string", pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", maxLength: 5, example: "09:30" }
})

/** Wall-clock `HH:MM`. */
export const LocalTime = Schema.String.annotations({
  jsonSchema: { type: "string", pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", example: "09:30" }
})

/** A timestamp in a response: ISO 8601 in UTC. */
export const DateTimeString = Schema.String.annotations({
  jsonSchema: { type: "string", format: "date-time", example: "2026-11-21T08:00:00.000Z" }
})

/** A day in a response. */
export const DateString = Schema.String.annotations({
  jsonSchema: { type: "string", format: "date", example: "2026-11-21" }
})

export const toIso = (d: Date) => d.toISOString()
export const toIsoOrNull = (d: Date | null) => (d === null ? null : d.toISOString())
