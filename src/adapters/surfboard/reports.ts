/**
 * Settlement reports through the Surfboard adapter (issue 15 part A): the port's
 * `settlementReports` and `settlementCharges` as calls to Surfboard, with the wire shapes as schemas
 * (the sandbox answers with the same ones, src/sandbox/surfboard/reports.ts).
 *
 * | port              | Surfboard                                                               | sent    |
 * |-------------------|-------------------------------------------------------------------------|---------|
 * | settlementReports | GET /partners/{partnerId}/merchants/{merchantId}/reports?startDate=     | retried |
 * | settlementCharges | GET /partners/{partnerId}/merchants/{merchantId}/reports/{payoutId}/charges | retried |
 *
 * The report list and its fields (payoutId, merchantId, transactionStartDate, transactionEndDate,
 * settlementDate, reportType, url, totalSale, totalRefund, fee, payout) are Surfboard's documented
 * ones ("Fetch settlement reports"). The `startDate` filter, the report's `currency` and the whole
 * charges section (fee VAT and itemised charges; in Surfboard's settlement file, not its JSON) are
 * assumptions, written down in docs/payment-provider.md "Settlement reports".
 */
import { Effect, Schema } from "effect"
import type {
  PaymentProviderClient,
  SettlementCharge,
  SettlementReport,
  SettlementReportType
} from "../../ports/PaymentProvider.js"
import { PaymentProviderRejected } from "../../ports/PaymentProvider.js"
import { operationSpan as withSpan, type SurfboardHttp } from "./client.js"
import { alphaCurrency } from "./currency.js"

const maybe = <S extends Schema.Schema.Any>(schema: S) => Schema.optional(Schema.NullOr(schema))
/** Amounts are numbers in Surfboard's report; strings are accepted too. */
const Minor = Schema.Union(Schema.Number, Schema.NumberFromString)

/** One item of GET …/reports (documented). */
export const WireReport = Schema.Struct({
  payoutId: Schema.String,
  merchantId: maybe(Schema.String),
  transactionStartDate: maybe(Schema.String),
  transactionEndDate: maybe(Schema.String),
  settlementDate: maybe(Schema.String),
  reportType: maybe(Schema.String),
  url: maybe(Schema.String),
  totalSale: Minor,
  totalRefund: Minor,
  fee: Minor,
  payout: Minor,
  /** Assumed: numeric ISO 4217 of the payout; absent means NOK (578). */
  currency: maybe(Schema.String)
})
export type WireReport = typeof WireReport.Encoded

/** One line of a report's charges (assumed shape). */
export const WireCharge = Schema.Struct({
  chargeId: Schema.String,
  chargeType: Schema.String,
  description: maybe(Schema.String),
  date: maybe(Schema.String),
  debit: maybe(Minor),
  credit: maybe(Minor),
  orderId: maybe(Schema.String),
  paymentId: maybe(Schema.String),
  referenceId: maybe(Schema.String),
  transactionDate: maybe(Schema.String),
  transactionAmount: maybe(Minor),
  /** Numeric ISO 4217. */
  transactionCurrency: maybe(Schema.String)
})
export type WireCharge = typeof WireCharge.Encoded

/** GET …/reports/{payoutId}/charges (assumed shape). */
export const WireCharges = Schema.Struct({
  payoutId: Schema.String,
  feeVat: Minor,
  charges: Schema.Array(WireCharge)
})
export type WireCharges = typeof WireCharges.Encoded

const REPORT_TYPES: ReadonlyArray<SettlementReportType> = ["DAILY", "WEEKLY", "MONTHLY"]
const DAY = /^\d{4}-\d{2}-\d{2}$/

const dayOrNull = (value: string | null | undefined) => {
  const day = value?.slice(0, 10)
  return day !== undefined && DAY.test(day) ? day : null
}

const int = (n: number | null | undefined) => (n === null || n === undefined ? 0 : Math.round(n))

/** A report as the port gives it: refunds negative, currency alpha, days as YYYY-MM-DD. */
export const reportOf = (merchantId: string, r: typeof WireReport.Type): SettlementReport => {
  const type = r.reportType?.toUpperCase()
  return {
    payoutId: r.payoutId,
    merchantId: r.merchantId ?? merchantId,
    settlementDate: dayOrNull(r.settlementDate),
    transactionsFrom: dayOrNull(r.transactionStartDate),
    transactionsTo: dayOrNull(r.transactionEndDate),
    reportType: REPORT_TYPES.find((t) => t === type) ?? null,
    currency: (r.currency ? alphaCurrency(r.currency) : undefined) ?? "NOK",
    salesMinor: int(r.totalSale),
    refundsMinor: -Math.abs(int(r.totalRefund)),
    feesMinor: int(r.fee),
    payoutMinor: int(r.payout),
    pdfUrl: r.url ?? null
  }
}

export const chargeOf = (c: typeof WireCharge.Type): SettlementCharge => ({
  chargeId: c.chargeId,
  type: c.chargeType.toUpperCase(),
  description: c.description ?? c.chargeType,
  date: dayOrNull(c.date),
  debitMinor: Math.abs(int(c.debit)),
  creditMinor: Math.abs(int(c.credit)),
  orderId: c.orderId ?? null,
  paymentId: c.paymentId ?? null,
  referenceId: c.referenceId ?? null,
  transactionDate: dayOrNull(c.transactionDate),
  transactionAmountMinor: c.transactionAmount === null || c.transactionAmount === undefined
    ? null
    : Math.abs(int(c.transactionAmount)),
  transactionCurrency: c.transactionCurrency ? (alphaCurrency(c.transactionCurrency) ?? null) : null
})

const enc = encodeURIComponent

export const makeReportCalls = (
  http: SurfboardHttp
): Pick<PaymentProviderClient, "settlementReports" | "settlementCharges"> => ({
  settlementReports: (account, request) =>
    Effect.gen(function*() {
      if (request.from !== undefined && !DAY.test(request.from)) {
        return yield* new PaymentProviderRejected({
          accountId: account.id,
          operation: "settlementReports",
          reason: "invalid",
          detail: `from ${request.from} is not a day (YYYY-MM-DD)`
        })
      }
      const base = `/partners/${enc(request.partnerId)}/merchants/${enc(account.merchantId)}/reports`
      const reports = yield* http.request(account, {
        operation: "settlementReports",
        method: "GET",
        route: "/partners/{partnerId}/merchants/{merchantId}/reports",
        path: request.from === undefined ? base : `${base}?startDate=${request.from}`
      }, Schema.Array(WireReport))
      return reports
        .map((r) => reportOf(account.merchantId, r))
        // The filter is an assumption: applied here as well, so a provider that ignores it changes nothing.
        .filter((r) => request.from === undefined || r.settlementDate === null || r.settlementDate >= request.from)
        .sort((a, b) => (a.settlementDate ?? "").localeCompare(b.settlementDate ?? ""))
    }).pipe(withSpan("settlementReports", account, { "surfboard.partner_id": request.partnerId })),

  settlementCharges: (account, request) =>
    http.request(account, {
      operation: "settlementCharges",
      method: "GET",
      route: "/partners/{partnerId}/merchants/{merchantId}/reports/{payoutId}/charges",
      path: `/partners/${enc(request.partnerId)}/merchants/${enc(account.merchantId)}/reports/${
        enc(request.payoutId)
      }/charges`
    }, WireCharges).pipe(
      Effect.map((c) => ({
        payoutId: c.payoutId,
        feeVatMinor: int(c.feeVat),
        charges: c.charges.map(chargeOf)
      })),
      withSpan("settlementCharges", account, { "surfboard.payout_id": request.payoutId })
    )
})
