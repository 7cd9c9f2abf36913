/** What every Quickbook API group shares: its path prefix and the schemas of days, times, ids and references. */
import { Schema } from "effect"
import { DateString, IsoDate, IsoLocalTime, LocalTime } from "../domain/dates.js"
import { DESK_DAYS_AHEAD } from "./sales/rules.js"

export const QUICKBOOK_PREFIX = "/api/quickbook/v1"

/** Whether a request is the Quickbook API's (src/Http.ts sends it there). */
export const isQuickbookUrl = (url: string) => {
  const path = url.split("?")[0]!
  return path === QUICKBOOK_PREFIX || path.startsWith(`${QUICKBOOK_PREFIX}/`) || path.startsWith("/api/quickbook/")
}

/** A day or time in an answer. */
export const Day = DateString.annotations({ description: "A local calendar day YYYY-MM-DD in the tour's time zone." })
export const Time = LocalTime.annotations({ description: "Local HH:MM (24 hour)." })
/**
 * A day or time in a request: the partner API's schemas (a real calendar day; 00:00 to 23:59), else
 * 400 `invalid_request`. The service also keeps days to the desk's window (`deskDayProblem`).
 */
export const DAY_WINDOW =
  `From yesterday to ${DESK_DAYS_AHEAD} days ahead; another day, or one that is not a real calendar day ` +
  "(e.g. 2026-02-30), answers 400 `invalid_request`."
export const DayParam = IsoDate.annotations({
  description: `A local calendar day YYYY-MM-DD in the tour's time zone. ${DAY_WINDOW}`
})
export const TimeParam = IsoLocalTime.annotations({
  description: "Local HH:MM (24 hour, 00:00 to 23:59); else 400 `invalid_request`."
})
/** Every step after the quote: test and live never cross (docs/decisions.md "Quickbook: test and live sales never cross"). */
export const OTHER_MODE =
  "A sale quoted with a key of the other mode (a test sale with a live key, a live sale with a test key) " +
  "answers 403 `tour_not_sellable_here`, its clerk message saying which; nothing is read, held, booked or charged."
export const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i)
).annotations({
  jsonSchema: {
    type: "string",
    format: "uuid",
    pattern: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    maxLength: 36
  }
})

export const SaleReference = Schema.String.pipe(Schema.pattern(/^SVC-[A-Z0-9]{10}$/)).annotations({
  description: "Sale reference `SVC-` + 10 uppercase letters or digits.",
  jsonSchema: { type: "string", pattern: "^SVC-[A-Z0-9]{10}$", maxLength: 14 }
})
