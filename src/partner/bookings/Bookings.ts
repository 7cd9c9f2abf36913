/**
 * Reads of the service's own bookings for the operators a request acts for: the list (newest
 * first, keyset paged) and one booking, as the API shows them. SQL: BookingsRepo.
 */
import { Effect, Option } from "effect"
import { toIso, toIsoOrNull } from "../../domain/dates.js"
import { notYours } from "../../domain/errors.js"
import type { CursorPosition } from "../../http/cursor.js"
import { apiStatusOf, type BookingDetail, type BookingSummary } from "./booking.js"
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

    const list = Effect.fn("Bookings.list")(function*(r: ListRequest) {
      const rows = yield* repo.list(r, r.limit + 1)
      const page = rows.slice(0, r.limit)
      const last = page[page.length - 1]
      return {
        rows: page.map((row) => toSummary(row, r.includeContact)),
        next: rows.length > r.limit && last ? { createdMicros: last.created_micros, id: last.id } : undefined
      } satisfies BookingListPage
    })

    const get = Effect.fn("Bookings.get")(
      function*(id: string, operatorIds: ReadonlyArray<string>, includeContact: boolean) {
        const row = yield* repo.findById(id, operatorIds)
        if (Option.isNone(row)) return yield* Effect.fail(notYours("booking"))
        return toDetail(row.value, includeContact)
      }
    )

    return { list, get } as const
  }),
  dependencies: [BookingsRepo.Default]
}) {}
