/**
 * What a settlement report means for the service (pure; unit-tested): its adjustments (every
 * itemised charge with its net effect on the payout), the chargebacks it reports (each CHARGEBACK
 * charge, with the CHARGEBACK_FEE charged for the same order or payment), the order of payouts, and
 * the settlement file the admin CLI imports (the same report and charges the job reads).
 */
import { Either, ParseResult, Schema } from "effect"
import type {
  SettlementCharge,
  SettlementCharges,
  SettlementReport,
  SettlementReportType
} from "../ports/PaymentProvider.js"

export const CHARGEBACK = "CHARGEBACK"
export const CHARGEBACK_FEE = "CHARGEBACK_FEE"

/** An adjustment of a payout as stored and shown: net = credit − debit. */
export interface Adjustment {
  readonly chargeId: string
  readonly type: string
  readonly description: string
  readonly date: string | null
  readonly debitMinor: number
  readonly creditMinor: number
  readonly netMinor: number
  readonly orderId: string | null
  readonly paymentId: string | null
}

export const adjustmentsOf = (charges: ReadonlyArray<SettlementCharge>): ReadonlyArray<Adjustment> =>
  charges.map((c) => ({
    chargeId: c.chargeId,
    type: c.type,
    description: c.description,
    date: c.date,
    debitMinor: c.debitMinor,
    creditMinor: c.creditMinor,
    netMinor: c.creditMinor - c.debitMinor,
    orderId: c.orderId,
    paymentId: c.paymentId
  }))

/** A chargeback as the settlement report tells it (the dispute desk adds its facts later). */
export interface ReportedChargeback {
  /** 'charge:<merchant>:<payoutId>:<chargeId>': the same charge is stored once. */
  readonly sourceKey: string
  readonly orderId: string | null
  readonly paymentId: string | null
  readonly referenceId: string | null
  /** The disputed transaction's amount and currency, when the report gives them. */
  readonly amountMinor: number | null
  readonly currency: string | null
  /** The chargeback fee in the disputed currency: known only when that is the payout's currency. */
  readonly feeMinor: number | null
  readonly settledCurrency: string
  /** What the payout lost: the chargeback's debit (net of any credit). */
  readonly settledAmountMinor: number
  /** The chargeback fee charged for the same order or payment in this report, if any. */
  readonly settledFeeMinor: number | null
  readonly settledOn: string | null
  readonly transactionDate: string | null
}

const sameTarget = (a: SettlementCharge, b: SettlementCharge) =>
  (a.paymentId !== null && a.paymentId === b.paymentId) || (a.orderId !== null && a.orderId === b.orderId)

export const chargebacksOf = (
  merchantId: string,
  report: SettlementReport,
  charges: SettlementCharges
): ReadonlyArray<ReportedChargeback> =>
  charges.charges.filter((c) => c.type === CHARGEBACK).map((c) => {
    const fees = charges.charges.filter((f) => f.type === CHARGEBACK_FEE && sameTarget(c, f))
    const settledFee = fees.length === 0 ? null : fees.reduce((n, f) => n + f.debitMinor - f.creditMinor, 0)
    const currency = c.transactionCurrency
    return {
      sourceKey: `charge:${merchantId}:${report.payoutId}:${c.chargeId}`,
      orderId: c.orderId,
      paymentId: c.paymentId,
      referenceId: c.referenceId,
      amountMinor: c.transactionAmountMinor,
      currency,
      feeMinor: currency !== null && currency === report.currency ? settledFee : null,
      settledCurrency: report.currency,
      settledAmountMinor: c.debitMinor - c.creditMinor,
      settledFeeMinor: settledFee,
      settledOn: report.settlementDate ?? c.date,
      transactionDate: c.transactionDate
    }
  })

/** A payout's place in the newest-first list: its settlement day at 00:00 UTC, else when it was imported. */
export const sortAtOf = (report: Pick<SettlementReport, "settlementDate">, importedAt: Date): Date =>
  report.settlementDate === null ? importedAt : new Date(`${report.settlementDate}T00:00:00.000Z`)

/** The day to read a merchant's reports from: its last imported settlement day again, else `firstDays` back. */
export const importFrom = (lastSettlementDay: string | null, today: string, firstDays: number): string =>
  lastSettlementDay ?? new Date(Date.parse(`${today}T00:00:00Z`) - firstDays * 86_400_000).toISOString().slice(0, 10)

// ---- The settlement file (admin CLI: `settlements import-file`) ----

const Day = Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a day YYYY-MM-DD" }))
const Minor = Schema.Int
const NonNegative = Schema.Int.pipe(Schema.nonNegative())

const FileCharge = Schema.Struct({
  chargeId: Schema.String.pipe(Schema.minLength(1)),
  type: Schema.String.pipe(Schema.minLength(1)),
  description: Schema.optional(Schema.String),
  date: Schema.optional(Schema.NullOr(Day)),
  debit: Schema.optional(NonNegative),
  credit: Schema.optional(NonNegative),
  orderId: Schema.optional(Schema.NullOr(Schema.String)),
  paymentId: Schema.optional(Schema.NullOr(Schema.String)),
  referenceId: Schema.optional(Schema.NullOr(Schema.String)),
  transactionDate: Schema.optional(Schema.NullOr(Day)),
  transactionAmount: Schema.optional(Schema.NullOr(NonNegative)),
  transactionCurrency: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))))
})

const FileReport = Schema.Struct({
  payoutId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  settlementDate: Schema.optional(Schema.NullOr(Day)),
  transactionStartDate: Schema.optional(Schema.NullOr(Day)),
  transactionEndDate: Schema.optional(Schema.NullOr(Day)),
  reportType: Schema.optional(Schema.NullOr(Schema.Literal("DAILY", "WEEKLY", "MONTHLY"))),
  currency: Schema.optional(Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))),
  url: Schema.optional(Schema.NullOr(Schema.String)),
  totalSale: Minor,
  /** Positive, as the provider reports it (stored negative). */
  totalRefund: NonNegative,
  fee: Minor,
  feeVat: Minor,
  payout: Minor,
  charges: Schema.optional(Schema.Array(FileCharge))
})

/** A settlement file: one merchant's reports with their charges (docs/payment-provider.md "Settlement files"). */
export const SettlementFile = Schema.Struct({
  merchantId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  reports: Schema.Array(FileReport)
})
export type SettlementFile = typeof SettlementFile.Type

export interface ParsedReport {
  readonly report: SettlementReport
  readonly charges: SettlementCharges
}

/** The file's reports as the port would give them, or why the file is not one. */
export const parseSettlementFile = (
  json: unknown
): Either.Either<{ readonly merchantId: string; readonly reports: ReadonlyArray<ParsedReport> }, string> =>
  Either.map(
    Either.mapLeft(
      Schema.decodeUnknownEither(SettlementFile)(json, { onExcessProperty: "error" }),
      (e) => ParseResult.TreeFormatter.formatErrorSync(e)
    ),
    (file) => ({
      merchantId: file.merchantId,
      reports: file.reports.map((r) => ({
        report: {
          payoutId: r.payoutId,
          merchantId: file.merchantId,
          settlementDate: r.settlementDate ?? null,
          transactionsFrom: r.transactionStartDate ?? null,
          transactionsTo: r.transactionEndDate ?? null,
          reportType: (r.reportType ?? null) as SettlementReportType | null,
          currency: r.currency ?? "NOK",
          salesMinor: r.totalSale,
          refundsMinor: -r.totalRefund,
          feesMinor: r.fee,
          payoutMinor: r.payout,
          pdfUrl: r.url ?? null
        },
        charges: {
          payoutId: r.payoutId,
          feeVatMinor: r.feeVat,
          charges: (r.charges ?? []).map((c) => ({
            chargeId: c.chargeId,
            type: c.type.toUpperCase(),
            description: c.description ?? c.type,
            date: c.date ?? null,
            debitMinor: c.debit ?? 0,
            creditMinor: c.credit ?? 0,
            orderId: c.orderId ?? null,
            paymentId: c.paymentId ?? null,
            referenceId: c.referenceId ?? null,
            transactionDate: c.transactionDate ?? null,
            transactionAmountMinor: c.transactionAmount ?? null,
            transactionCurrency: c.transactionCurrency ?? null
          }))
        }
      }))
    })
  )

// ---- The dispute desk's facts (admin CLI: `chargebacks set`) ----

export const DISPUTE_STATUSES = ["triage", "evidence_requested", "responded", "won", "lost", "accepted"] as const

export type DisputeField = "dispute_reference" | "dispute_status" | "reason" | "respond_by" | "registered_at"
export const DISPUTE_FIELDS: ReadonlyArray<DisputeField> = [
  "dispute_reference",
  "dispute_status",
  "reason",
  "respond_by",
  "registered_at"
]

export interface DisputeInput {
  readonly disputeReference?: string | undefined
  readonly disputeStatus?: string | undefined
  readonly reason?: string | undefined
  readonly respondBy?: string | undefined
  readonly registeredAt?: string | undefined
  /** Fields to clear (set to null). */
  readonly clear?: ReadonlyArray<DisputeField> | undefined
}

const isDay = (s: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) &&
  new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s

/** The facts to write (absent: unchanged; null: cleared), or what is wrong with the input. */
export const checkDisputeFacts = (input: DisputeInput) => {
  const clear = new Set(input.clear ?? [])
  const pick = (field: DisputeField, value: string | undefined) =>
    clear.has(field) ? null : value === undefined ? undefined : value.trim()
  const facts = {
    disputeReference: pick("dispute_reference", input.disputeReference),
    disputeStatus: pick("dispute_status", input.disputeStatus),
    reason: pick("reason", input.reason),
    respondBy: pick("respond_by", input.respondBy),
    registeredAt: pick("registered_at", input.registeredAt)
  }
  if (Object.values(facts).every((v) => v === undefined)) return Either.left("give at least one fact to set or clear")
  if (facts.disputeReference === "") return Either.left("dispute reference must not be empty")
  if (facts.disputeReference && facts.disputeReference.length > 100) {
    return Either.left("dispute reference: at most 100 characters")
  }
  if (facts.disputeStatus && !(DISPUTE_STATUSES as ReadonlyArray<string>).includes(facts.disputeStatus)) {
    return Either.left(`dispute status must be one of ${DISPUTE_STATUSES.join(", ")}`)
  }
  if (facts.reason !== undefined && facts.reason !== null && (facts.reason === "" || facts.reason.length > 500)) {
    return Either.left("reason: 1 to 500 characters")
  }
  for (const [name, day] of [["respond-by", facts.respondBy], ["registered-at", facts.registeredAt]] as const) {
    if (day !== undefined && day !== null && !isDay(day)) return Either.left(`${name} must be a day YYYY-MM-DD`)
  }
  return Either.right(facts)
}
