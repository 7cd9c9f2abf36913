/** Calendar days for the sandbox: the current instant, local days of a time zone, day arithmetic on `YYYY-MM-DD`. */
import { Clock, Effect } from "effect"
import { addDays, daysBetween, localDayAt } from "../../domain/localDay.js"

/** Now, from the Effect clock. */
export const currentDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

/** The calendar day at `epochMillis` in `timeZone`. */
export const localDay = (epochMillis: number, timeZone: string): string => localDayAt(timeZone, new Date(epochMillis))

export { addDays }

/** Every day from `from` to `to`, both included. */
export const daysIn: (from: string, to: string) => ReadonlyArray<string> = daysBetween

/** Epoch milliseconds of a calendar day at 00:00 UTC: how Bókun writes local departure days. */
export const dayMillis = (day: string): number => Date.parse(`${day}T00:00:00Z`)

/** `HH:MM` minus some minutes, wrapping at midnight. */
export const minutesBefore = (time: string, minutes: number): string => {
  const [h, m] = time.split(":").map(Number) as [number, number]
  const total = (((h * 60 + m - minutes) % 1440) + 1440) % 1440
  return `${String(Math.floor(total / 60)).padStart(2, "0")}:${String(total % 60).padStart(2, "0")}`
}

/** A real calendar day `YYYY-MM-DD`. */
export const validDay = (day: string): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(day) && new Date(`${day}T00:00:00Z`).toISOString().startsWith(day)
