/**
 * What the five finance reads share (spec §2 "Finance records", §4 `/api/v1/finance/*`, §8): the day
 * range (with both ends at most 366 days), the page size, the booking as a finance record shows it,
 * and the page shape. Each read lives in its own folder (payouts/, statements/, chargebacks/,
 * payLater/, invoices/) with its own `Api.ts` group; scope `finance:read` on all of them.
 */
import { Effect, Either, Schema } from "effect"
import { DateString, IsoDate } from "../../domain/dates.js"
import { InvalidRequest } from "../../domain/errors.js"
import { checkDayRange } from "../../domain/localDay.js"
import type { CursorPosition } from "../../http/cursor.js"
import type { CursorSigner } from "../../http/CursorSigner.js"
import { intParam } from "../../http/params.js"
import { CurrentKey } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { BookingStatus } from "../bookings/booking.js"
import { EXAMPLE_BOOKING, EXAMPLE_CURSOR } from "./examples.js"

/** Longest `from`–`to` range, in days with both ends counted. */
export const FINANCE_MAX_DAYS = 366

/** `from` and `to` (both optional, inclusive UTC days); `what` names the day, e.g. "settlement day". */
export const financeDayRange = (what: string) => ({
  from: Schema.optional(IsoDate).annotations({ description: `First ${what} (UTC, YYYY-MM-DD), inclusive.` }),
  to: Schema.optional(IsoDate).annotations({
    description: `Last ${what} (UTC, YYYY-MM-DD), inclusive; not before \`from\`; with \`from\` at most ` +
      `${FINANCE_MAX_DAYS} days counting both ends.`
  })
})

/** `limit`: 1 to 100, `fallback` when absent. */
export const financeLimit = (fallback: number) =>
  Schema.optional(intParam(1, 100)).annotations({ description: `1 to 100, default ${fallback}.` })

/** The range rule: with both ends given, `to` not before `from` and at most FINANCE_MAX_DAYS days. */
export const checkFinanceRange = (range: { readonly from?: string | undefined; readonly to?: string | undefined }) =>
  range.from === undefined || range.to === undefined
    ? Either.void
    : Either.mapBoth(checkDayRange(range.from, range.to, FINANCE_MAX_DAYS), {
      onLeft: (e) => new InvalidRequest(e),
      onRight: () => undefined
    })

/** The operators a finance list reads: the range rule (400), then the key's operators, or `partner_id` (404). */
export const financeOperatorIds = (p: {
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly partner_id?: string | undefined
}) =>
  Effect.gen(function*() {
    const range = checkFinanceRange(p)
    if (Either.isLeft(range)) return yield* range.left
    return yield* operatorIdsFor(yield* CurrentKey, p.partner_id)
  })

/**
 * One keyset page of a list: the cursor checked against the filters it must have been issued under
 * (400 otherwise), the rows after it, and the next page's cursor bound to the same filters.
 */
export const signedPage = <Row, E, R>(
  cursors: CursorSigner,
  request: { readonly cursor: string | undefined; readonly filters: Record<string, unknown> },
  read: (
    after: CursorPosition | undefined
  ) => Effect.Effect<{ readonly rows: ReadonlyArray<Row>; readonly next: CursorPosition | undefined }, E, R>
) =>
  Effect.gen(function*() {
    const after = yield* cursors.decode(request.cursor, request.filters)
    const page = yield* read(after)
    return { data: page.rows, next_cursor: page.next ? cursors.encode(page.next, request.filters) : null }
  })

/** The booking a chargeback or a pay-later charge belongs to; no guest details. */
export const FinanceBooking = Schema.Struct({
  id: Schema.UUID.annotations({ examples: [EXAMPLE_BOOKING.id] }),
  confirmation_code: Schema.String.annotations({ examples: [EXAMPLE_BOOKING.confirmation_code] }),
  experience_date: Schema.NullOr(DateString).annotations({ examples: [EXAMPLE_BOOKING.experience_date] }),
  status: BookingStatus
}).annotations({ identifier: "FinanceBooking", examples: [EXAMPLE_BOOKING] })

/** `{data, next_cursor}` of a finance list. */
export const financePage = <S extends Schema.Schema.Any>(item: S) => ({
  data: Schema.Array(item),
  next_cursor: Schema.NullOr(Schema.String).annotations({
    description: "Pass as `cursor` for the next page with the same filters; null on the last page.",
    examples: [EXAMPLE_CURSOR]
  })
})
