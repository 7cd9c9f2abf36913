/**
 * Settlement reports in the Surfboard sandbox (issue 15 part A), made from the sandbox's own
 * transactions, in the wire shapes the adapter reads (src/adapters/surfboard/reports.ts):
 *
 *   GET /partners/:partnerId/merchants/:merchantId/reports?startDate=YYYY-MM-DD
 *   GET /partners/:partnerId/merchants/:merchantId/reports/:payoutId/charges
 *
 * The rules (docs/payment-provider.md "Settlement reports"):
 * - one DAILY report per merchant and settlement day: the NOK transactions (not voided) of one UTC
 *   day settle the next day; a report exists once its settlement day has come (sandbox time);
 * - `totalSale` the purchases, `totalRefund` the returns (positive, as Surfboard), `fee`
 *   FEE_BASIS_POINTS of each purchase (rounded per transaction), `feeVat` 25 % of the fee;
 * - seeded charges (`seedCharge`: a chargeback on a payment, its fee, a partner fee, a credit…) land
 *   in the report of their settlement day (default: the next one to come);
 * - payout = sales − refunds − fee − fee VAT − debits + credits; a negative payout is reported as is
 *   and carried into the next report as a PREVIOUS_PENDING_LIABILITY charge;
 * - `payoutId` is stable per merchant and settlement day (a hash), so reading twice gives the same ids.
 * The `reportReads` switch fails these two reads only (error 503, hang, or a dropped connection).
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import type { WireCharge, WireCharges, WireReport } from "../../adapters/surfboard/reports.js"
import { dropConnection } from "../faults.js"
import { answer, param, success } from "./api.js"
import { authenticate } from "./auth.js"
import type { SandboxClock } from "./clock.js"
import { badRequest, notFound, SandboxFailure } from "./failure.js"
import type { Store } from "./store.js"
import type { SurfboardSwitches } from "./switches.js"

/** The sandbox's fee: 1.5 % of each purchase. */
export const FEE_BASIS_POINTS = 150
/** VAT on the fee. */
export const FEE_VAT_PERCENT = 25
const NOK = "578"

const DDL = `
  CREATE TABLE IF NOT EXISTS surfboard_sandbox.settlement_charges (
    id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES surfboard_sandbox.merchants(id) ON DELETE CASCADE,
    settlement_date date NOT NULL,
    type text NOT NULL,
    description text NOT NULL,
    debit_minor bigint NOT NULL DEFAULT 0 CHECK (debit_minor >= 0),
    credit_minor bigint NOT NULL DEFAULT 0 CHECK (credit_minor >= 0),
    order_id text,
    payment_id text,
    reference_id text,
    transaction_date date,
    transaction_amount_minor bigint,
    transaction_currency text,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS settlement_charges_by_merchant ON surfboard_sandbox.settlement_charges (merchant_id, settlement_date);
  CREATE INDEX IF NOT EXISTS transactions_by_merchant ON surfboard_sandbox.transactions (merchant_id, created_at);
`

export const createReportTables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(sql`SELECT pg_advisory_xact_lock(hashtext('surfboard_sandbox.reports'))`, sql.unsafe(DDL))
  )).pipe(Effect.asVoid, Effect.orDie)

export interface ChargeSpec {
  readonly merchantId: string
  /** CHARGEBACK, CHARGEBACK_FEE, SERVICE_PROVIDER_FEE, PARTNER_FEE, or another type. */
  readonly type: string
  /** Taken from the payout (positive); or `creditMinor` for money added. */
  readonly debitMinor?: number
  readonly creditMinor?: number
  readonly description?: string
  /** The order or payment it concerns (a chargeback): its reference, day, amount and currency are filled in. */
  readonly orderId?: string
  readonly paymentId?: string
  /** YYYY-MM-DD; default the next settlement day (tomorrow, sandbox time). */
  readonly settlementDate?: string
}

export interface ReportLine {
  readonly report: WireReport
  readonly feeVat: number
  readonly charges: ReadonlyArray<WireCharge>
}

const DAY_MS = 86_400_000
const dayOf = (d: Date) => d.toISOString().slice(0, 10)
const addDay = (day: string, n: number) => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS))
const payoutIdOf = (merchantId: string, day: string) =>
  "po_" + createHash("sha256").update(`${merchantId}:${day}`).digest("hex").slice(0, 20)

const DESCRIPTIONS: Record<string, string> = {
  CHARGEBACK: "Chargeback",
  CHARGEBACK_FEE: "Chargeback fee",
  SERVICE_PROVIDER_FEE: "Service provider fee",
  PARTNER_FEE: "Partner fee",
  PREVIOUS_PENDING_LIABILITY: "Previous pending liability"
}

export const makeReports = (clock: SandboxClock) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* createReportTables

    /** Every report of the merchant settled up to today (sandbox time), oldest first. */
    const reportsOf = (merchantId: string) =>
      Effect.gen(function*() {
        const today = dayOf(yield* clock.now)
        const days = yield* sql<{ day: string; sales: string; refunds: string; fee: string }>`
          SELECT to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
            coalesce(sum(amount_minor) FILTER (WHERE type = 'PURCHASE'), 0)::text AS sales,
            coalesce(sum(amount_minor) FILTER (WHERE type = 'RETURN'), 0)::text AS refunds,
            coalesce(sum(round(amount_minor * ${FEE_BASIS_POINTS} / 10000.0)) FILTER (WHERE type = 'PURCHASE'), 0)::text AS fee
          FROM surfboard_sandbox.transactions
          WHERE merchant_id = ${merchantId} AND NOT voided AND currency = ${NOK}
            AND created_at < ${today}::date::timestamp AT TIME ZONE 'UTC'
          GROUP BY 1 ORDER BY 1`
        const charges = yield* sql<{
          id: string
          settlement_date: string
          type: string
          description: string
          debit_minor: string
          credit_minor: string
          order_id: string | null
          payment_id: string | null
          reference_id: string | null
          transaction_date: string | null
          transaction_amount_minor: string | null
          transaction_currency: string | null
        }>`
          SELECT id, to_char(settlement_date, 'YYYY-MM-DD') AS settlement_date, type, description,
            debit_minor::text, credit_minor::text, order_id, payment_id, reference_id,
            to_char(transaction_date, 'YYYY-MM-DD') AS transaction_date, transaction_amount_minor::text, transaction_currency
          FROM surfboard_sandbox.settlement_charges
          WHERE merchant_id = ${merchantId} AND settlement_date <= ${today}::date
          ORDER BY settlement_date, created_at, id`
        const byDay = new Map(days.map((d) => [addDay(d.day, 1), d]))
        const settlementDays = [...new Set([...byDay.keys(), ...charges.map((c) => c.settlement_date)])]
          .filter((d) => d <= today)
          .sort()
        const lines: Array<ReportLine> = []
        let liability = 0
        for (const day of settlementDays) {
          const t = byDay.get(day)
          const sales = Number(t?.sales ?? 0)
          const refunds = Number(t?.refunds ?? 0)
          const fee = Number(t?.fee ?? 0)
          const feeVat = Math.round(fee * FEE_VAT_PERCENT / 100)
          const payoutId = payoutIdOf(merchantId, day)
          const wire: Array<WireCharge> = []
          if (liability > 0) {
            wire.push({
              chargeId: `liab_${payoutId}`,
              chargeType: "PREVIOUS_PENDING_LIABILITY",
              description: DESCRIPTIONS.PREVIOUS_PENDING_LIABILITY!,
              date: day,
              debit: liability,
              credit: 0
            })
          }
          for (const c of charges.filter((c) => c.settlement_date === day)) {
            wire.push({
              chargeId: c.id,
              chargeType: c.type,
              description: c.description,
              date: day,
              debit: Number(c.debit_minor),
              credit: Number(c.credit_minor),
              orderId: c.order_id,
              paymentId: c.payment_id,
              referenceId: c.reference_id,
              transactionDate: c.transaction_date,
              transactionAmount: c.transaction_amount_minor === null ? null : Number(c.transaction_amount_minor),
              transactionCurrency: c.transaction_currency
            })
          }
          const debits = wire.reduce((n, c) => n + Number(c.debit ?? 0), 0)
          const credits = wire.reduce((n, c) => n + Number(c.credit ?? 0), 0)
          const payout = sales - refunds - fee - feeVat - debits + credits
          liability = payout < 0 ? -payout : 0
          const from = t ? addDay(day, -1) : null
          lines.push({
            report: {
              payoutId,
              merchantId,
              transactionStartDate: from,
              transactionEndDate: from,
              settlementDate: day,
              reportType: "DAILY",
              url: `https://reports.sandbox.invalid/settlements/${payoutId}.pdf`,
              totalSale: sales,
              totalRefund: refunds,
              fee,
              payout,
              currency: NOK
            },
            feeVat,
            charges: wire
          })
        }
        return lines
      })

    /** A charge for the merchant's report of its settlement day (a chargeback on a payment, a fee…). */
    const seedCharge = (spec: ChargeSpec) =>
      Effect.gen(function*() {
        const now = yield* clock.now
        const debit = spec.debitMinor ?? 0
        const credit = spec.creditMinor ?? 0
        if (!Number.isSafeInteger(debit) || !Number.isSafeInteger(credit) || debit < 0 || credit < 0) {
          return yield* badRequest("debitMinor and creditMinor are non-negative integers")
        }
        const type = spec.type.toUpperCase()
        const [tx] = spec.orderId === undefined && spec.paymentId === undefined ? [] : yield* sql<{
          order_id: string
          payment_id: string
          reference_id: string | null
          day: string
          amount_minor: string
          currency: string
        }>`
          SELECT order_id, payment_id, reference_id, to_char((created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
            amount_minor::text, currency
          FROM surfboard_sandbox.transactions
          WHERE merchant_id = ${spec.merchantId} AND type = 'PURCHASE'
            AND (${spec.orderId ?? null}::text IS NULL OR order_id = ${spec.orderId ?? null})
            AND (${spec.paymentId ?? null}::text IS NULL OR payment_id = ${spec.paymentId ?? null})
          ORDER BY created_at LIMIT 1`
        if ((spec.orderId !== undefined || spec.paymentId !== undefined) && !tx) {
          return yield* notFound(`Payment ${spec.paymentId ?? spec.orderId} of merchant ${spec.merchantId}`)
        }
        const id = `cg_${randomBytes(8).toString("hex")}`
        const settlementDate = spec.settlementDate ?? addDay(dayOf(now), 1)
        yield* sql`
          INSERT INTO surfboard_sandbox.settlement_charges (id, merchant_id, settlement_date, type, description,
            debit_minor, credit_minor, order_id, payment_id, reference_id, transaction_date, transaction_amount_minor,
            transaction_currency, created_at)
          VALUES (${id}, ${spec.merchantId}, ${settlementDate}::date, ${type},
            ${spec.description ?? DESCRIPTIONS[type] ?? type}, ${debit}, ${credit}, ${tx?.order_id ?? null},
            ${tx?.payment_id ?? null}, ${tx?.reference_id ?? null}, ${tx?.day ?? null}::date,
            ${tx ? Number(tx.amount_minor) : null}, ${tx?.currency ?? null}, ${now})`
        return { chargeId: id, settlementDate, orderId: tx?.order_id ?? null, paymentId: tx?.payment_id ?? null }
      })

    return { reportsOf, seedCharge }
  })

export type SandboxReports = Effect.Effect.Success<ReturnType<typeof makeReports>>

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** The two report reads, authenticated as every Surfboard call, behind the `reportReads` switch. */
export const reportsApi = (
  store: Store,
  reports: SandboxReports,
  switchesFor: (merchantId: string) => Effect.Effect<SurfboardSwitches>
) => {
  const read = <R>(handler: (merchantId: string) => Effect.Effect<unknown, SandboxFailure, R>, message: string) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const merchant = yield* authenticate(store)
      const partner = yield* param("partnerId")
      const merchantId = yield* param("merchantId")
      if (merchantId !== merchant.id || partner !== merchant.partner_id) {
        return yield* new SandboxFailure({
          status: 403,
          message: "Forbidden: Insufficient permissions.",
          errorCode: "FORBIDDEN"
        })
      }
      const switches = yield* switchesFor(merchant.id)
      if (switches.reportReads === "error") {
        return yield* new SandboxFailure({ status: 503, message: "Service Unavailable", errorCode: "UNAVAILABLE" })
      }
      if (switches.reportReads === "hang") return yield* Effect.never
      if (switches.reportReads === "drop") {
        yield* dropConnection(request)
        return yield* Effect.never
      }
      return success(yield* handler(merchant.id), message)
    })

  return HttpRouter.empty.pipe(
    HttpRouter.get(
      "/partners/:partnerId/merchants/:merchantId/reports",
      answer(read((merchantId) =>
        Effect.gen(function*() {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const start = typeof params.startDate === "string" ? params.startDate : undefined
          if (start !== undefined && !DAY.test(start)) return yield* badRequest("startDate must be YYYY-MM-DD")
          const lines = yield* Effect.orDie(reports.reportsOf(merchantId))
          return lines
            .map((l) => l.report)
            .filter((r) => start === undefined || (r.settlementDate ?? "") >= start)
        }), "Settlement reports fetched successfully"))
    ),
    HttpRouter.get(
      "/partners/:partnerId/merchants/:merchantId/reports/:payoutId/charges",
      answer(read((merchantId) =>
        Effect.gen(function*() {
          const payoutId = yield* param("payoutId")
          const line = (yield* Effect.orDie(reports.reportsOf(merchantId))).find((l) => l.report.payoutId === payoutId)
          if (!line) return yield* notFound(`Report ${payoutId}`)
          return { payoutId, feeVat: line.feeVat, charges: line.charges } satisfies WireCharges
        }), "Settlement charges fetched successfully"))
    )
  )
}
