/**
 * Reads of the service's own bookings for the operators a request acts for: the list (newest
 * first, keyset paged) and one booking, as the API shows them. SQL: BookingsRepo.
 */
import { Effect, Option } from "effect"
import { toIso, toIsoOrNull } from "../../domain/dates.js"
import { InvalidRequest, notYours } from "../../domain/errors.js"
import type { CursorPosition } from "../../http/cursor.js"
import { CursorSigner } from "../../http/CursorSigner.js"
import { spanFn } from "../../observability/spanFn.js"
import type { AuthenticatedKey } from "../auth/KeyAuth.js"
import { operatorIdsFor } from "../auth/visibility.js"
import type { BookingListParams } from "./Api.js"
import { apiStatusOf, type BookingDetail, type BookingPage, type BookingSummary } from "./booking.js"
import { type BookingDetailRow, type BookingRow, BookingsRepo, type ListRequest } from "./BookingsRepo.js"

export type { BookingDetailRow, BookingFilters, BookingRow, ListRequest } from "./BookingsRepo.js"

/** A booking row as the API shows it (pure: the benchmark's floor maps its rows with it too). */
export const toSummary = (row: BookingRow, includeContact: boolean): BookingSummary => ({
  id: row.id,
  confirmation_code: row.confirmation_code,
  status: apiStatusOf(row.status),
  partner: { id: row.operator_id, name: row.operator_name },
  tour: { id: row.tour_id, name: row.tour_name },
  experience_date: row.experience_date,
  start_time: row.start_time,
  timezone: row.timezone,
  participants: row.participants,
  amount_minor: row.amount_minor,
  currency: row.currency,
  channel: row.channel,
  guest: includeContact
    ? { name: row.guest_name, email: row.guest_email, phone: row.guest_phone }
    : { name: row.guest_name },
  booked_at: toIsoOrNull(row.booked_at),
  created_at: toIso(row.created_at),
  updated_at: toIsoOrNull(row.updated_at)
})

export const toDetail = (row: BookingDetailRow, includeContact: boolean): BookingDetail => ({
  ...toSummary(row, includeContact),
  provider_reference: row.provider_reference,
  payment: {
    strategy: row.payment_strategy,
    pay_later: row.payment_strategy === "pay_later" && row.pay_later_status !== null
      ? {
        status: row.pay_later_status,
        amount_minor: row.pay_later_amount_minor ?? 0,
        currency: row.pay_later_currency,
        charge_at: toIsoOrNull(row.pay_later_charge_at),
        paid_at: toIsoOrNull(row.pay_later_paid_at)
      }
      : null
  },
  commission: row.commission_amount_minor === null ? null : {
    amount_minor: row.commission_amount_minor,
    rate_percent: row.commission_rate_percent,
    currency: row.commission_currency,
    status: row.commission_status
  }
})

export interface BookingListPage {
  readonly rows: ReadonlyArray<BookingSummary>
  /** Position of the last row when more rows follow. */
  readonly next: CursorPosition | undefined
}

export class Bookings extends Effect.Service<Bookings>()("Partner/Bookings", {
  effect: Effect.gen(function*() {
    const repo = yield* BookingsRepo
    const cursors = yield* CursorSigner

    const list = spanFn("Bookings.list")(function*(r: ListRequest) {
      const rows = yield* repo.list(r, r.limit + 1)
      const page = rows.slice(0, r.limit)
      const last = page[page.length - 1]
      return {
        rows: page.map((row) => toSummary(row, r.includeContact)),
        next: rows.length > r.limit && last ? { createdMicros: last.created_micros, id: last.id } : undefined
      } satisfies BookingListPage
    })

    const get = spanFn("Bookings.get")(
      function*(id: string, operatorIds: ReadonlyArray<string>, includeContact: boolean) {
        const row = yield* repo.findById(id, operatorIds)
        if (Option.isNone(row)) return yield* Effect.fail(notYours("booking"))
        return toDetail(row.value, includeContact)
      }
    )

    /**
     * GET /bookings for a key (the REST handler and the assistant's `list_bookings`): the range
     * check, the operators in view, the signed cursor bound to the filters, the page.
     */
    const page = spanFn("Bookings.page")(function*(key: AuthenticatedKey, p: typeof BookingListParams.Type) {
      if (p.date_from && p.date_to && p.date_from > p.date_to) {
        return yield* new InvalidRequest({ detail: "date_from must not be after date_to", field: "date_from" })
      }
      const operatorIds = yield* operatorIdsFor(key, p.partner_id)
      const filters = {
        date_from: p.date_from,
        date_to: p.date_to,
        // The instant, not its spelling: "…T13:00:00+01:00" and "…T12:00:00Z" are one filter.
        updated_since: p.updated_since === undefined ? undefined : new Date(p.updated_since).toISOString(),
        status: p.status,
        partner_id: p.partner_id
      }
      const after = yield* cursors.decode(p.cursor, filters)
      const listed = yield* list({
        operatorIds,
        limit: p.limit ?? 50,
        after,
        dateFrom: p.date_from,
        dateTo: p.date_to,
        updatedSince: p.updated_since,
        status: p.status,
        includeContact: key.scopes.includes("guests.contact:read")
      })
      const body: BookingPage = {
        data: listed.rows,
        next_cursor: listed.next ? cursors.encode(listed.next, filters) : null
      }
      return body
    })

    /** GET /bookings/{id} for a key (the REST handler and the assistant's `get_booking`). */
    const detail = spanFn("Bookings.detail")(
      function*(key: AuthenticatedKey, id: string, partnerId: string | undefined) {
        const operatorIds = yield* operatorIdsFor(key, partnerId)
        return yield* get(id, operatorIds, key.scopes.includes("guests.contact:read"))
      }
    )

    return { list, get, page, detail } as const
  }),
  dependencies: [BookingsRepo.Default, CursorSigner.Default]
}) {}
