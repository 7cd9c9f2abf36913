/**
 * The payouts read's pure parts (unit-tested): a stored payout with its adjustments and the
 * operators paid through its merchant, as the API shows it (spec §2 "Finance records").
 */
import type { Payout } from "./Api.js"

export interface PayoutRow {
  readonly id: string
  readonly merchant_id: string
  readonly payout_id: string
  readonly settlement_date: string | null
  readonly transactions_from: string | null
  readonly transactions_to: string | null
  readonly report_type: "DAILY" | "WEEKLY" | "MONTHLY" | null
  readonly currency: string
  readonly sales_minor: string
  readonly refunds_minor: string
  readonly fees_minor: string
  readonly fee_vat_minor: string
  readonly payout_minor: string
  /** sort_at in microseconds since the epoch (the cursor's position). */
  readonly sort_micros: string
}

export interface AdjustmentRow {
  readonly payout_row_id: string
  readonly type: string
  readonly description: string
  readonly date: string | null
  readonly debit_minor: string
  readonly credit_minor: string
  readonly net_minor: string
}

export interface MerchantPartnerRow {
  readonly merchant_id: string
  readonly id: string
  readonly name: string
}

/** The provider's charge type as the API names it: `SERVICE_PROVIDER_FEE` → `service_provider_fee`. */
export const adjustmentType = (providerType: string): string =>
  providerType.trim().toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "") || "other"

export const toPayout = (
  row: PayoutRow,
  adjustments: ReadonlyArray<AdjustmentRow>,
  partners: ReadonlyArray<{ readonly id: string; readonly name: string }>
): Payout => ({
  partners: partners.map((p) => ({ id: p.id, name: p.name })),
  payout_id: row.payout_id,
  settlement_date: row.settlement_date,
  transactions_from: row.transactions_from,
  transactions_to: row.transactions_to,
  report_type: row.report_type,
  currency: row.currency,
  sales_minor: Number(row.sales_minor),
  refunds_minor: Number(row.refunds_minor),
  fees_minor: Number(row.fees_minor),
  fee_vat_minor: Number(row.fee_vat_minor),
  payout_minor: Number(row.payout_minor),
  adjustments: adjustments.map((a) => ({
    type: adjustmentType(a.type),
    description: a.description,
    date: a.date,
    debit_minor: Number(a.debit_minor),
    credit_minor: Number(a.credit_minor),
    net_minor: Number(a.net_minor)
  }))
})
