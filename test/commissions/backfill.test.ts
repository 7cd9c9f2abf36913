/**
 * Migration 0032 on a database that already has bookings: the backfill writes each booking's entries
 * (and the statements' numbers) as the triggers would have, in booking order; and statement numbers
 * given to many operators' first entries at once have no duplicate and no gap.
 */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgMigrator } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { migrations } from "../../migrations/index.js"
import { pgClientLayer } from "../../src/db/Database.js"
import { freshDatabase } from "../support/server.js"

const before: typeof migrations = Object.fromEntries(
  Object.entries(migrations).filter(([name]) => name < "0032")
) as typeof migrations

const onFreshDatabase = <A, E>(body: Effect.Effect<A, E, SqlClient.SqlClient | NodeContext.NodeContext>) =>
  Effect.flatMap(
    freshDatabase,
    (url) => body.pipe(Effect.provide(Layer.merge(pgClientLayer(url, 6), NodeContext.layer)), Effect.scoped)
  )

describe("migration 0032: the commission ledger", () => {
  it.live(
    "backfills the bookings already there: sales, cancellations, nothing for holds or no commission",
    () =>
      onFreshDatabase(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* PgMigrator.run({ loader: PgMigrator.fromRecord(before) })
        const [op] = yield* sql<{ id: string }>`INSERT INTO operators (name) VALUES ('Old Tours') RETURNING id`
        const book = (
          code: string,
          status: string,
          bookedAt: string | null,
          o: { commission?: boolean; cancelledAt?: string } = {}
        ) =>
          sql`
          INSERT INTO bookings (confirmation_code, status, operator_id, tour_name, timezone, amount_minor, currency,
            payment_strategy, commission_amount_minor, commission_rate_percent, booked_at, created_at, updated_at)
          VALUES (${code}, ${status}, ${op!.id}, 'Old Tour', 'Europe/Oslo', 50000, 'NOK', 'pay_now',
            ${o.commission === false ? null : 5000}, ${o.commission === false ? null : 10},
            ${bookedAt}, ${bookedAt ?? "2025-01-01T00:00:00Z"}, ${o.cancelledAt ?? null})`
        yield* book("OLD-2", "CONFIRMED", "2025-01-20T10:00:00Z")
        yield* book("OLD-1", "CANCELLED", "2025-01-05T10:00:00Z", { cancelledAt: "2025-02-02T10:00:00Z" })
        yield* book("OLD-3", "HOLD", null)
        yield* book("OLD-4", "CONFIRMED", "2025-01-21T10:00:00Z", { commission: false })
        // Pay-later, balance not collected yet: its sale is pending, with the reservation fee.
        yield* sql`
          INSERT INTO bookings (confirmation_code, status, operator_id, timezone, amount_minor, currency,
            payment_strategy, pay_later_status, pay_later_amount_minor, pay_later_currency, commission_rate_percent,
            booked_at)
          VALUES ('OLD-5', 'RESERVED', ${
          op!.id
        }, 'Europe/Oslo', 30000, 'NOK', 'pay_later', 'upcoming', 24000, 'NOK', 15,
            '2025-01-25T10:00:00Z')`
        expect(yield* sql`SELECT 1 FROM pg_tables WHERE tablename = 'commission_statements'`).toEqual([])

        yield* PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })
        const rows = yield* sql<
          {
            code: string
            type: string
            gross: number
            commission: number
            reserve: number
            pending: boolean
            at: Date
            key: string
            id: string
          }
        >`
        SELECT b.confirmation_code AS code, e.type, e.gross_minor AS gross, e.commission_minor AS commission,
          e.reserve_fee_minor AS reserve, e.pending, e.occurred_at AS at, e.source_key AS key, b.id
        FROM commission_entries e JOIN bookings b ON b.id = e.booking_id ORDER BY e.occurred_at`
        expect(rows.map((r) => [r.code, r.type, r.gross, r.commission, r.reserve, r.pending, r.at.toISOString()]))
          .toEqual([
            ["OLD-1", "sale", 50000, 5000, 0, false, "2025-01-05T10:00:00.000Z"],
            ["OLD-2", "sale", 50000, 5000, 0, false, "2025-01-20T10:00:00.000Z"],
            ["OLD-5", "sale", 30000, 4500, 6000, true, "2025-01-25T10:00:00.000Z"],
            ["OLD-1", "cancellation", -50000, -5000, 0, false, "2025-02-02T10:00:00.000Z"]
          ])
        expect(rows.map((r) => r.key)).toEqual(rows.map((r) => `${r.type}:${r.id}`))
        // The triggers take over from there: the balance collected settles the backfilled sale.
        yield* sql`UPDATE bookings SET pay_later_status = 'collected', pay_later_paid_at = now() WHERE confirmation_code = 'OLD-5'`
        expect(yield* sql`SELECT 1 FROM commission_entries WHERE pending`).toEqual([])
        const numbers = yield* sql<{ month: string; number: string }>`
        SELECT month::text AS month, number FROM commission_statements ORDER BY month`
        expect(numbers).toEqual([
          { month: "2025-01-01", number: "CS-202501-0001" },
          { month: "2025-02-01", number: "CS-202502-0001" }
        ])
      })),
    120_000
  )

  it.live(
    "first entries of 12 operators in one month at once: numbers 1 to 12, each once",
    () =>
      onFreshDatabase(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* PgMigrator.run({ loader: PgMigrator.fromRecord(migrations) })
        const ops = yield* sql<{ id: string }>`
        INSERT INTO operators (name) SELECT 'Op ' || g FROM generate_series(1, 12) g RETURNING id`
        // Each in its own transaction on its own connection, all at once (twice each: the second finds its number).
        yield* Effect.all(
          [...ops, ...ops].map((op, i) =>
            sql.withTransaction(sql`
            INSERT INTO bookings (confirmation_code, status, operator_id, timezone, amount_minor, currency,
              payment_strategy, commission_rate_percent, booked_at)
            VALUES (${
              "C-" + i
            }, 'CONFIRMED', ${op.id}, 'Europe/Oslo', 10000, 'NOK', 'pay_now', 10, '2025-04-10T10:00:00Z')`)
          ),
          { concurrency: 24 }
        )
        const numbers = yield* sql<{ operator_id: string; seq: number; number: string }>`
        SELECT operator_id, seq, number FROM commission_statements WHERE month = '2025-04-01' ORDER BY seq`
        expect(numbers.map((n) => n.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        expect(new Set(numbers.map((n) => n.operator_id)).size).toBe(12)
        expect(numbers[11]!.number).toBe("CS-202504-0012")
        const [counter] = yield* sql<
          { last: number }
        >`SELECT last FROM commission_statement_counters WHERE month = '2025-04-01'`
        expect(counter!.last).toBe(12)
      })),
    120_000
  )
})
