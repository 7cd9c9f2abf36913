/** Test data built through the same Operators service the CLI uses, plus direct booking inserts. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { Operators } from "../../src/operators/Operators.js"
import { SCOPES } from "../../src/partner/auth/scopes.js"

const YEAR = 365 * 86_400_000

export interface BookingInput {
  readonly operatorId: string
  readonly status?: string
  readonly tourId?: string | null
  readonly tourName?: string | null
  readonly experienceDate?: string | null
  readonly startTime?: string | null
  readonly timezone?: string
  readonly participants?: number | null
  readonly amountMinor?: number
  readonly currency?: string
  readonly channel?: string | null
  readonly guestName?: string | null
  readonly guestEmail?: string | null
  readonly guestPhone?: string | null
  readonly createdAt?: Date
  readonly updatedAt?: Date | null
  readonly bookedAt?: Date | null
  readonly payLater?: {
    status: string
    amountMinor: number
    currency: string
    chargeAt: Date | null
    paidAt: Date | null
  }
  readonly commission?: {
    amountMinor: number
    ratePercent: number | null
    currency: string | null
    status: string | null
  }
  readonly providerReference?: string | null
}

export const insertBooking = (b: BookingInput) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      INSERT INTO bookings (
        confirmation_code, status, operator_id, tour_id, tour_name, experience_date, start_time, timezone,
        participants, amount_minor, currency, channel, guest_name, guest_email, guest_phone, provider_reference,
        payment_strategy, pay_later_status, pay_later_amount_minor, pay_later_currency, pay_later_charge_at, pay_later_paid_at,
        commission_amount_minor, commission_rate_percent, commission_currency, commission_status,
        booked_at, created_at, updated_at)
      VALUES (
        ${"T-" + randomUUID().slice(0, 13)}, ${b.status ?? "CONFIRMED"}, ${b.operatorId}, ${b.tourId ?? null},
        ${b.tourName === undefined ? "Harbour Tour" : b.tourName}, ${
      b.experienceDate === undefined ? "2026-12-01" : b.experienceDate
    },
        ${b.startTime === undefined ? "10:00" : b.startTime}, ${b.timezone ?? "Europe/Oslo"},
        ${b.participants === undefined ? 2 : b.participants}, ${b.amountMinor ?? 99800}, ${b.currency ?? "NOK"},
        ${b.channel === undefined ? "website" : b.channel}, ${b.guestName === undefined ? "Guest Person" : b.guestName},
        ${b.guestEmail === undefined ? "guest@example.com" : b.guestEmail}, ${
      b.guestPhone === undefined ? "+4712345678" : b.guestPhone
    },
        ${b.providerReference ?? null},
        ${b.payLater ? "pay_later" : "pay_now"}, ${b.payLater?.status ?? null}, ${b.payLater?.amountMinor ?? null},
        ${b.payLater?.currency ?? null}, ${b.payLater?.chargeAt ?? null}, ${b.payLater?.paidAt ?? null},
        ${b.commission?.amountMinor ?? null}, ${b.commission?.ratePercent ?? null}, ${b.commission?.currency ?? null},
        ${b.commission?.status ?? null},
        ${b.bookedAt === undefined ? new Date() : b.bookedAt}, ${b.createdAt ?? new Date()}, ${b.updatedAt ?? null})
      RETURNING id`.pipe(Effect.map((rows) => rows[0]!.id), Effect.orDie))

export interface KeySpec {
  readonly by: string
  readonly operators: ReadonlyArray<string>
  readonly scopes?: ReadonlyArray<string>
  readonly expiresAt?: Date
  readonly name?: string
}

export const createKey = (k: KeySpec) =>
  Effect.flatMap(Operators, (admin) =>
    admin.createKey({
      createdBy: k.by,
      name: k.name ?? "test key",
      scopes: k.scopes ?? ["bookings:read"],
      operatorIds: k.operators,
      expiresAt: k.expiresAt ?? new Date(Date.now() + YEAR)
    })).pipe(Effect.orDie)

/**
 * Three operators: Alpha (owner alice, admin bob, member dave), Beta (owner bob), Cetus (owner carol).
 * Names are unique per call so several worlds can share a database.
 */
export const makeWorld = Effect.gen(function*() {
  const admin = yield* Operators
  const tag = randomUUID().slice(0, 6)
  const alpha = yield* admin.createOperator({ name: `Alpha Tours ${tag}` })
  const beta = yield* admin.createOperator({ name: `Beta Boats ${tag}` })
  const cetus = yield* admin.createOperator({ name: `Cetus Cruises ${tag}`, timezone: "Europe/Lisbon" })
  const user = (name: string) => admin.createUser({ email: `${name}-${tag}@example.com`, name })
  const alice = yield* user("alice")
  const bob = yield* user("bob")
  const carol = yield* user("carol")
  const dave = yield* user("dave")
  yield* admin.setMembership(alpha, alice, "owner")
  yield* admin.setMembership(alpha, bob, "admin")
  yield* admin.setMembership(beta, bob, "owner")
  yield* admin.setMembership(cetus, carol, "owner")
  yield* admin.setMembership(alpha, dave, "member")
  return { alpha, beta, cetus, alice, bob, carol, dave, tag }
}).pipe(Effect.orDie)

export const ALL_SCOPES = SCOPES
