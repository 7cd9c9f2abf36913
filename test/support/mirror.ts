/**
 * Booking-system mirror fixtures, inserted directly (the mirror refresh is what fills these tables
 * for real): accounts linked to operators, manifest rows, per-day sync times and check-ins. The one
 * place tests insert mirror data.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { BookingSystemAccounts } from "../../src/operators/BookingSystemAccounts.js"
import type { SandboxVendor } from "../../src/sandbox/bokun/index.js"

/** A booking-system account, linked to the given operators (several operators share it). */
export const insertAccount = (operatorIds: ReadonlyArray<string>, name = "Bokun account") =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.gen(function*() {
      const [account] = yield* sql<{ id: string }>`
        INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key)
        VALUES ('bokun', ${name}, 'https://api.bokun.example', 'access', 'secret')
        RETURNING id`
      for (const id of operatorIds) {
        yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${id}`
      }
      return account!.id
    })).pipe(Effect.orDie)

/**
 * A Bókun sandbox vendor as a booking-system account of the service (its service channel known),
 * linked to the given operators; answers the account id.
 */
export const linkSandboxVendor = (baseUrl: string, vendor: SandboxVendor, operatorIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const accounts = yield* BookingSystemAccounts
    const accountId = yield* accounts.create({
      kind: "bokun",
      name: vendor.title,
      baseUrl,
      accessKey: vendor.accessKey,
      secretKey: vendor.secretKey,
      serviceChannelId: String(vendor.serviceChannelId)
    })
    for (const id of operatorIds) yield* accounts.link(id, accountId)
    return accountId
  }).pipe(Effect.orDie)

/** The account the operator is linked to, or a new one linked to it. */
export const accountOf = (operatorId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ id: string | null }>`SELECT booking_system_account_id AS id FROM operators WHERE id = ${operatorId}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows[0]?.id ? Effect.succeed(rows[0].id) : insertAccount([operatorId]))
      )
  )

export interface RowInput {
  readonly accountId: string
  readonly operatorId: string
  /** Local departure day; default 2026-12-01. */
  readonly date?: string
  readonly startTime?: string | null
  readonly timezone?: string
  readonly status?: "CONFIRMED" | "RESERVED" | "CANCELLED"
  readonly productId?: string
  readonly productTitle?: string | null
  readonly rateId?: string | null
  readonly rateTitle?: string | null
  readonly participants?: number
  readonly pax?: ReadonlyArray<{ pricingCategoryId?: string; title: string; quantity: number }> | null
  readonly reference?: string | null
  readonly externalReference?: string | null
  readonly serviceBookingId?: string | null
  readonly channel?: { class: string | null; source: string | null; title: string | null }
  readonly guestName?: string | null
  readonly guestEmail?: string | null
  readonly guestPhone?: string | null
  readonly pickupPlace?: string | null
  readonly pickupTime?: string | null
  readonly paymentStatus?: string | null
}

export const insertRow = (r: RowInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      INSERT INTO manifest_rows (
        account_id, line_id, booking_id, reference, external_reference, operator_id, service_booking_id, status,
        product_id, product_title, rate_id, rate_title, departure_date, start_time, timezone, participants,
        pax_breakdown, channel_class, channel_source, channel_title, guest_name, guest_email, guest_phone,
        pickup_place, pickup_time, payment_status, total_minor, currency)
      VALUES (
        ${r.accountId}, ${randomUUID()}, ${randomUUID()},
        ${r.reference === undefined ? "BKN-" + randomUUID().slice(0, 8) : r.reference},
        ${r.externalReference ?? null}, ${r.operatorId}, ${r.serviceBookingId ?? null}, ${r.status ?? "CONFIRMED"},
        ${r.productId ?? "p-1"}, ${r.productTitle === undefined ? "Fjord Cruise" : r.productTitle},
        ${r.rateId === undefined ? "r-1" : r.rateId}, ${r.rateTitle === undefined ? "Standard" : r.rateTitle},
        ${r.date ?? "2026-12-01"}::date, ${r.startTime === undefined ? "10:00" : r.startTime}, ${
      r.timezone ?? "Europe/Oslo"
    },
        ${r.participants ?? 2},
        ${
      r.pax === null
        ? null
        : JSON.stringify(r.pax ?? [{ pricingCategoryId: "1", title: "Adult", quantity: r.participants ?? 2 }])
    }::jsonb,
        ${r.channel?.class ?? "direct"}, ${r.channel?.source ?? null}, ${r.channel?.title ?? "Direct"},
        ${r.guestName === undefined ? "Guest Person" : r.guestName},
        ${r.guestEmail === undefined ? "guest@example.com" : r.guestEmail},
        ${r.guestPhone === undefined ? "+4712345678" : r.guestPhone},
        ${r.pickupPlace ?? null}, ${r.pickupTime ?? null}, ${r.paymentStatus === undefined ? "PAID" : r.paymentStatus},
        10000, 'NOK')
      RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie))

/** `count` rows for one operator, on the account it is linked to (linked to a new one when it has none). */
export const insertRows = (
  operatorId: string,
  count: number,
  extra: Partial<Omit<RowInput, "accountId" | "operatorId">> = {}
) =>
  Effect.flatMap(
    accountOf(operatorId),
    (accountId) => Effect.forEach(Array.from({ length: count }), () => insertRow({ ...extra, accountId, operatorId }))
  )

/** Records a successful refresh of an account's day. */
export const markSynced = (accountId: string, date: string, at: Date) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO mirror_days (account_id, departure_date, synced_at) VALUES (${accountId}, ${date}::date, ${at})
      ON CONFLICT (account_id, departure_date) DO UPDATE SET synced_at = excluded.synced_at`).pipe(
      Effect.asVoid,
      Effect.orDie
    )

export const setCheckIn = (rowId: string, status: "checked_in" | "no_show", present: number | null = null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO manifest_checkins (row_id, status, present) VALUES (${rowId}, ${status}, ${present})
      ON CONFLICT (row_id) DO UPDATE SET status = excluded.status, present = excluded.present`).pipe(
      Effect.asVoid,
      Effect.orDie
    )
