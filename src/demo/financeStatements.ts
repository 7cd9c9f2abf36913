/**
 * The demo's commission statements (issue 15, part C; first start only, from seed.ts): seven small
 * operators of one regional tour group (Henrik Strand owns them all), each with a handful of bookings
 * last month and this month (the commission ledger's triggers turn them into entries: migration
 * 0032), so that one `finance:read` key spans more than six operators (`too_many`); and the keys
 * `Demo: finance, many operators`, `Demo: finance, Fjord` and `Demo: finance, Lisboa`. Three of the
 * four big operators' statements come from the seeded bookings themselves (they carry commission);
 * Nordkapp Coastal Tours, with no tours here, gets four bookings last month.
 *
 * Every small operator's last month has sales, one cancellation, and one pay-later booking whose
 * balance is still to be charged (so that statement is a `draft`); the last operator's pay-later
 * balance was collected, so its statement is final.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Operators } from "../operators/Operators.js"

export const SMALL_OPERATORS = [
  "Bergen Harbour Rib AS",
  "Hardanger Cider Walks AS",
  "Sognefjord Kayak Lag AS",
  "Flåm Fjordbike AS",
  "Ålesund Bird Boats AS",
  "Geiranger Peak Guides AS",
  "Stavanger Pulpit Shuttle AS"
] as const

const DAY = 86_400_000

/** The first instant (UTC) of the month before the month of `now`. */
const lastMonthStart = (now: number) => {
  const d = new Date(now)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)
}

export interface DemoFinanceKeys<E> {
  /** Adds operators to the demo's list (demo.json, and the keys' `partners`). */
  readonly addOperators: (operators: ReadonlyArray<{ id: string; name: string; timezone: string }>) => void
  readonly make: (spec: {
    name: string
    by: string
    scopes: ReadonlyArray<string>
    ops: ReadonlyArray<string>
    note: string
  }) => Effect.Effect<unknown, E>
  readonly fjord: { readonly operator: string; readonly by: string }
  readonly lisboa: { readonly operator: string; readonly by: string }
  /** Nordkapp Coastal Tours: a few bookings last month, so each demo operator has a statement. */
  readonly nordkapp: string
}

export const seedFinanceStatements = <E>(now: number, keys: DemoFinanceKeys<E>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const admin = yield* Operators
    const henrik = yield* admin.createUser({ email: "henrik@vestlandtours.no", name: "Henrik Strand" })
    const operators: Array<{ id: string; name: string; timezone: string }> = []
    for (const [i, name] of SMALL_OPERATORS.entries()) {
      const id = yield* admin.createOperator({
        name,
        timezone: "Europe/Oslo",
        legalName: name,
        orgNumber: String(945_000_100 + i * 7)
      })
      yield* admin.setMembership(id, henrik, "owner")
      operators.push({ id, name, timezone: "Europe/Oslo" })
    }
    const start = lastMonthStart(now)
    const rows = operators.flatMap((op, i) =>
      [0, 1, 2, 3, 4, 5].map((n) => {
        const booked = new Date(start + (2 + n * 4 + i) * DAY + (9 + n) * 3_600_000)
        const amount = 45000 + i * 5000 + n * 2500
        const payLater = n === 4
        const collected = payLater && i === operators.length - 1
        return {
          code: `DEMO-S${i + 1}-${n + 1}`,
          op: op.id,
          tour: `${op.name.replace(/ AS$/, "")} day tour`,
          status: n === 3 ? "CANCELLED" : "CONFIRMED",
          // A balance still to be charged: a departure after today, charged three days before it.
          day: new Date(payLater && !collected ? now + 12 * DAY : booked.getTime() + (10 + n) * DAY).toISOString()
            .slice(0, 10),
          amount,
          payLater,
          balance: payLater ? amount - Math.floor(amount / 5) : null,
          balanceStatus: payLater ? (collected ? "collected" : "upcoming") : null,
          chargeAt: payLater ? new Date(collected ? booked.getTime() + 7 * DAY : now + 9 * DAY) : null,
          paidAt: collected ? new Date(booked.getTime() + 7 * DAY) : null,
          booked,
          cancelled: n === 3 ? new Date(booked.getTime() + 2 * DAY) : null
        }
      })
    )
    // One more sale this month for each, so this month's statements exist too.
    const thisMonth = operators.map((op, i) => ({
      code: `DEMO-S${i + 1}-7`,
      op: op.id,
      tour: `${op.name.replace(/ AS$/, "")} day tour`,
      status: "CONFIRMED",
      day: new Date(now + 10 * DAY).toISOString().slice(0, 10),
      amount: 52000,
      payLater: false,
      balance: null,
      balanceStatus: null,
      chargeAt: null,
      paidAt: null,
      booked: new Date(Math.max(start + 31 * DAY, now - 3_600_000)),
      cancelled: null
    }))
    // Nordkapp Coastal Tours (no tours listed here) sold three trips last month and had one cancelled.
    const nordkapp = [0, 1, 2, 3].map((n) => {
      const booked = new Date(start + (5 + n * 6) * DAY + 11 * 3_600_000)
      return {
        code: `DEMO-NK-${n + 1}`,
        op: keys.nordkapp,
        tour: "North Cape Midnight Sun Cruise",
        status: n === 2 ? "CANCELLED" : "CONFIRMED",
        day: new Date(booked.getTime() + 14 * DAY).toISOString().slice(0, 10),
        amount: 189000 + n * 10000,
        payLater: false,
        balance: null,
        balanceStatus: null,
        chargeAt: null,
        paidAt: null,
        booked,
        cancelled: n === 2 ? new Date(booked.getTime() + 3 * DAY) : null
      }
    })
    for (const b of [...rows, ...thisMonth, ...nordkapp].filter((b) => b.booked.getTime() <= now)) {
      yield* sql`
        INSERT INTO bookings (confirmation_code, status, operator_id, tour_name, experience_date, start_time, timezone,
          participants, amount_minor, currency, channel, guest_name, guest_email, payment_strategy, pay_later_status,
          pay_later_amount_minor, pay_later_currency, pay_later_charge_at, pay_later_paid_at,
          commission_amount_minor, commission_rate_percent, commission_currency, commission_status,
          booked_at, created_at, updated_at)
        VALUES (${b.code}, ${b.status}, ${b.op}, ${b.tour}, ${b.day}, '10:00', 'Europe/Oslo', 2, ${b.amount}, 'NOK',
          'website', 'Demo Guest', 'guest@example.com', ${b.payLater ? "pay_later" : "pay_now"}, ${b.balanceStatus},
          ${b.balance}, ${b.payLater ? "NOK" : null}, ${b.chargeAt}, ${b.paidAt},
          ${Math.round(b.amount / 10)}, 10, 'NOK', ${b.cancelled ? "voided" : "pending"},
          ${b.booked}, ${b.booked}, ${b.cancelled})`
    }

    keys.addOperators(operators)
    yield* keys.make({
      name: "Demo: finance, many operators",
      by: henrik,
      scopes: ["finance:read"],
      ops: operators.map((o) => o.id),
      note: "seven small operators of one tour group: GET /finance/statements answers too_many; add partner_id"
    })
    yield* keys.make({
      name: "Demo: finance, Fjord",
      by: keys.fjord.by,
      scopes: ["finance:read"],
      ops: [keys.fjord.operator],
      note: "Fjord Explorer's finance records: GET /finance/statements shows last month's commission statement"
    })
    yield* keys.make({
      name: "Demo: finance, Lisboa",
      by: keys.lisboa.by,
      scopes: ["finance:read"],
      ops: [keys.lisboa.operator],
      note: "Lisboa Tejo Cruises' finance records (EUR): last month's commission statement"
    })
    return {
      operators,
      user: {
        email: "henrik@vestlandtours.no",
        name: "Henrik Strand",
        roles: Object.fromEntries(SMALL_OPERATORS.map((n) => [n, "owner"]))
      }
    }
  })
