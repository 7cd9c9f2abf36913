/**
 * The SQL of GET /api/v1/finance/payouts (migration 0030): the payouts of the merchants the
 * operators in view are paid through, newest settlement day first (keyset on `sort_at, id`), their
 * adjustments, and every operator paid through each merchant.
 *
 * No spans of its own (`repoEdge.untraced`, as BookingsRepo): Payouts.list's span and the driver's
 * cover its three statements (bench/README.md, issue 15: the finance lists).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { repoEdge } from "../../../db/repoEdge.js"
import { toPgArray } from "../../../db/sql.js"
import { type CursorPosition, microsToIso } from "../../../http/cursor.js"
import type { AdjustmentRow, MerchantPartnerRow, PayoutRow } from "./rules.js"

export interface PayoutListRequest {
  readonly operatorIds: ReadonlyArray<string>
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly after?: CursorPosition | undefined
}

export class PayoutsRepo extends Effect.Service<PayoutsRepo>()("Partner/PayoutsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const list = (r: PayoutListRequest, take: number) => {
      const clauses = [
        sql`p.merchant_id IN (
          SELECT merchant_id FROM operator_payment_accounts WHERE operator_id = ANY(${
          toPgArray(r.operatorIds)
        }::uuid[]))`
      ]
      if (r.from) clauses.push(sql`p.settlement_date >= ${r.from}::date`)
      if (r.to) clauses.push(sql`p.settlement_date <= ${r.to}::date`)
      if (r.after) {
        clauses.push(sql`(p.sort_at, p.id) < (${microsToIso(r.after.createdMicros)}::timestamptz, ${r.after.id}::uuid)`)
      }
      return sql<PayoutRow>`
        SELECT p.id, p.merchant_id, p.payout_id, to_char(p.settlement_date, 'YYYY-MM-DD') AS settlement_date,
          to_char(p.transactions_from, 'YYYY-MM-DD') AS transactions_from,
          to_char(p.transactions_to, 'YYYY-MM-DD') AS transactions_to, p.report_type, p.currency,
          p.sales_minor::text, p.refunds_minor::text, p.fees_minor::text, p.fee_vat_minor::text, p.payout_minor::text,
          (extract(epoch FROM p.sort_at) * 1000000)::bigint::text AS sort_micros
        FROM settlement_payouts p
        WHERE ${sql.and(clauses)}
        ORDER BY p.sort_at DESC, p.id DESC
        LIMIT ${take}`
    }

    const adjustments = (payoutRowIds: ReadonlyArray<string>) =>
      sql<AdjustmentRow>`
        SELECT payout_row_id, type, description, to_char(date, 'YYYY-MM-DD') AS date, debit_minor::text,
          credit_minor::text, net_minor::text
        FROM settlement_adjustments
        WHERE payout_row_id = ANY(${toPgArray(payoutRowIds)}::uuid[])
        ORDER BY payout_row_id, position`

    /** Every operator paid through each merchant (the legal entity's operators), by name. */
    const partners = (merchantIds: ReadonlyArray<string>) =>
      sql<MerchantPartnerRow>`
        SELECT a.merchant_id, o.id, o.name
        FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
        WHERE a.merchant_id IN ${sql.in(merchantIds)}
        ORDER BY o.name, o.id`

    return repoEdge.untraced({ list, adjustments, partners })
  })
}) {}
