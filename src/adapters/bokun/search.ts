/**
 * The Bókun adapter's two reads by a range of days, both through the booking search
 * (`POST /booking.json/booking-search`, read-only, retried): every page of the bookings departing in
 * a range (the mirror's `bookingLines`), and one page of the bookings created in a range (the sales
 * ledger's `createdBookingLines`).
 */
import { Effect } from "effect"
import { annotateSpan } from "../../observability/spanFn.js"
import type { BookingLine, BookingSystemAccount, BookingSystemClient } from "../../ports/BookingSystem.js"
import type { BokunHttp } from "./client.js"
import * as Dialect from "./dialect.js"
import { bookingLines } from "./mapping.js"
import { invalid } from "./rejection.js"

/** Bookings per booking-search page. */
export interface SearchOptions {
  readonly searchPageSize: number
}

interface DateRange {
  readonly from: string
  readonly to: string
  readonly includeLower: boolean
  readonly includeUpper: boolean
}

export const makeBookingSearch = (http: BokunHttp, options: SearchOptions) => {
  /** One page of the seller's bookings whose `field` falls in `range`. */
  const searchPage = (
    account: BookingSystemAccount,
    field: "startDateRange" | "creationDateRange",
    range: DateRange,
    page: number
  ) =>
    http.request(account, {
      operation: "bookingSearch",
      method: "POST",
      route: "/booking.json/booking-search",
      path: "/booking.json/booking-search",
      body: { bookingRole: "SELLER", [field]: range, page, pageSize: options.searchPageSize },
      safe: true
    }, Dialect.BookingSearchResult)

  const bookingLinesIn: BookingSystemClient["bookingLines"] = (account, range) =>
    Effect.gen(function*() {
      const lines = new Map<string, BookingLine>()
      const days = { from: range.from, to: range.to, includeLower: true, includeUpper: true }
      let page = 1
      let seen = 0
      let pages = 1
      while (page <= pages) {
        const result = yield* searchPage(account, "startDateRange", days, page)
        pages = Math.max(1, Math.ceil(result.totalHits / options.searchPageSize))
        if (result.items.length === 0) break
        seen += result.items.length
        for (const booking of result.items) {
          for (const line of bookingLines(booking, account)) {
            if (line.date >= range.from && line.date <= range.to) lines.set(line.lineId, line)
          }
        }
        if (seen >= result.totalHits) break
        page++
      }
      yield* annotateSpan({ "bokun.pages": page, "bokun.lines": lines.size })
      return [...lines.values()]
    }).pipe(
      Effect.withSpan("BookingSystem.bookingLines", { attributes: { "bokun.account_id": account.id, ...range } })
    )

  /**
   * One page of the bookings created on the UTC days [from, to]: `creationDateRange` from the first
   * day's 00:00Z (included) to the day after the last one's 00:00Z (excluded), as instants.
   */
  const createdLinesPage: BookingSystemClient["createdBookingLines"] = (account, query) =>
    Effect.gen(function*() {
      const start = Date.parse(`${query.from}T00:00:00Z`)
      const end = Date.parse(`${query.to}T00:00:00Z`) + 86_400_000
      if (Number.isNaN(start) || Number.isNaN(end) || end <= start || query.page < 1) {
        return yield* invalid(account, "bookingSearch", `not a range of days: ${query.from}..${query.to}`)
      }
      const instants = {
        from: new Date(start).toISOString(),
        to: new Date(end).toISOString(),
        includeLower: true,
        includeUpper: false
      }
      const result = yield* searchPage(account, "creationDateRange", instants, query.page)
      const lines: Array<BookingLine> = []
      for (const booking of result.items) {
        // A booking outside the range asked for is not judged here (the booking system answered loosely).
        if (booking.creationDate < start || booking.creationDate >= end) continue
        lines.push(...bookingLines(booking, account))
      }
      const read = (query.page - 1) * options.searchPageSize + result.items.length
      const last = result.items.length === 0 || read >= result.totalHits
      yield* annotateSpan({ "bokun.page": query.page, "bokun.lines": lines.length })
      return { lines, nextPage: last ? null : query.page + 1, totalBookings: result.totalHits }
    }).pipe(
      Effect.withSpan("BookingSystem.createdBookingLines", {
        attributes: { "bokun.account_id": account.id, from: query.from, to: query.to }
      })
    )

  return { bookingLines: bookingLinesIn, createdBookingLines: createdLinesPage }
}
