/**
 * The SQL of the settlement import (SettlementImport; migration 0030): the merchants to read and
 * their credentials, where each merchant's import stands, storing one report with its adjustments
 * and chargebacks (idempotent on `(merchant_id, payout_id)` and the chargeback's `source_key`),
 * matching chargebacks to bookings, and the dispute desk's facts. Errors of the database are defects
 * at its edge (repoEdge), once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import type { SettlementReport } from "../ports/PaymentProvider.js"
import type { Adjustment, ReportedChargeback } from "./rules.js"

export interface MerchantToImport {
  readonly merchant_id: string
  /** Credentials of one of its operators' rows (a sandbox merchant's own), or null: SURFBOARD_*. */
  readonly base_url: string | null
  readonly api_key: string | null
  readonly api_secret: string | null
  readonly provider_partner_id: string | null
  readonly last_settlement_day: string | null
}

export interface StoredReport {
  readonly payoutRowId: string
  /** false: the payout was stored before (nothing written). */
  readonly created: boolean
  readonly chargebacks: number
}

export interface DisputeFacts {
  readonly disputeReference?: string | null | undefined
  readonly disputeStatus?: string | null | undefined
  readonly reason?: string | null | undefined
  readonly respondBy?: string | null | undefined
  readonly registeredAt?: string | null | undefined
}

export interface ChargebackListing {
  readonly id: string
  readonly merchant_id: string
  readonly booking_id: string | null
  readonly operator_id: string | null
  readonly order_id: string | null
  readonly payment_id: string | null
  readonly settled_amount_minor: string | null
  readonly settled_on: string | null
  readonly dispute_reference: string | null
  readonly dispute_status: string | null
  readonly first_seen_at: Date
}

export class SettlementsRepo extends Effect.Service<SettlementsRepo>()("Settlements/SettlementsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Every merchant of operator_payment_accounts once, with credentials and its last imported day. */
    const merchants = (only?: string) =>
      sql<MerchantToImport>`
        SELECT DISTINCT ON (a.merchant_id) a.merchant_id, a.base_url, a.api_key, a.api_secret,
          m.provider_partner_id,
          (SELECT to_char(max(p.settlement_date), 'YYYY-MM-DD') FROM settlement_payouts p
            WHERE p.merchant_id = a.merchant_id AND p.source = 'provider') AS last_settlement_day
        FROM operator_payment_accounts a
        LEFT JOIN settlement_merchants m ON m.merchant_id = a.merchant_id
        WHERE ${only ?? null}::text IS NULL OR a.merchant_id = ${only ?? null}
        ORDER BY a.merchant_id, (a.base_url IS NULL), a.operator_id`

    const known = (merchantId: string, payoutIds: ReadonlyArray<string>) =>
      payoutIds.length === 0 ? Effect.succeed(new Set<string>()) : Effect.map(
        sql<{ payout_id: string }>`
          SELECT payout_id FROM settlement_payouts
          WHERE merchant_id = ${merchantId} AND payout_id IN ${sql.in(payoutIds)}`,
        (rows) => new Set(rows.map((r) => r.payout_id))
      )

    const setPartner = (merchantId: string, partnerId: string | null) =>
      sql`
        INSERT INTO settlement_merchants (merchant_id, provider_partner_id) VALUES (${merchantId}, ${partnerId})
        ON CONFLICT (merchant_id) DO UPDATE SET provider_partner_id = excluded.provider_partner_id`.pipe(Effect.asVoid)

    const recordAttempt = (merchantId: string, outcome: "ok" | "failed", error: string | null) =>
      sql`
        INSERT INTO settlement_merchants (merchant_id, last_attempt_at, last_outcome, last_error, last_imported_at)
        VALUES (${merchantId}, now(), ${outcome}, ${error}, CASE WHEN ${outcome} = 'ok' THEN now() END)
        ON CONFLICT (merchant_id) DO UPDATE SET last_attempt_at = now(), last_outcome = excluded.last_outcome,
          last_error = excluded.last_error,
          last_imported_at = coalesce(excluded.last_imported_at, settlement_merchants.last_imported_at)`
        .pipe(Effect.asVoid)

    /** The first booking of the merchant's operators the order / payment / reference names. */
    const matchBooking = (merchantId: string, c: Pick<ReportedChargeback, "orderId" | "paymentId" | "referenceId">) =>
      Effect.map(
        sql<{ booking_id: string; operator_id: string }>`
          WITH cand AS (
            SELECT bp.booking_id, 1 AS rank FROM booking_payments bp
            WHERE bp.merchant_id = ${merchantId}
              AND (bp.provider_order_id = ${c.orderId} OR bp.provider_payment_id = ${c.paymentId})
            UNION ALL
            SELECT pl.booking_id, 2 FROM payment_links pl
            WHERE pl.merchant_id = ${merchantId} AND pl.booking_id IS NOT NULL AND pl.provider_link_id = ${c.orderId}
            UNION ALL
            SELECT b.id, 3 FROM quickbook_payments qp
            JOIN quickbook_sales qs ON qs.reference = qp.sale_reference
            JOIN bookings b ON b.provider_reference = qs.booking_code
            WHERE (qp.order_id = ${c.orderId} OR qp.payment_id = ${c.paymentId})
              AND (qp.merchant_id IS NULL OR qp.merchant_id = ${merchantId})
            UNION ALL
            SELECT b.id, 4 FROM bookings b
            WHERE b.confirmation_code = ${c.referenceId} OR b.provider_reference = ${c.referenceId}
          )
          SELECT b.id AS booking_id, b.operator_id FROM cand JOIN bookings b ON b.id = cand.booking_id
          WHERE b.operator_id IN (SELECT operator_id FROM operator_payment_accounts WHERE merchant_id = ${merchantId})
          ORDER BY cand.rank, b.created_at LIMIT 1`,
        (rows) => Option.fromNullable(rows[0])
      )

    /**
     * The payout, its adjustments and its chargebacks, in one transaction; nothing when the payout
     * (merchant, payoutId) is stored already.
     */
    const storeReport = (r: {
      readonly merchantId: string
      readonly report: SettlementReport
      readonly feeVatMinor: number
      readonly adjustments: ReadonlyArray<Adjustment>
      readonly chargebacks: ReadonlyArray<ReportedChargeback>
      readonly source: "provider" | "file"
      readonly sortAt: Date
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const p = r.report
        const [inserted] = yield* sql<{ id: string }>`
          INSERT INTO settlement_payouts (merchant_id, payout_id, settlement_date, transactions_from, transactions_to,
            report_type, currency, sales_minor, refunds_minor, fees_minor, fee_vat_minor, payout_minor, pdf_url, source, sort_at)
          VALUES (${r.merchantId}, ${p.payoutId}, ${p.settlementDate}::date, ${p.transactionsFrom}::date,
            ${p.transactionsTo}::date, ${p.reportType}, ${p.currency}, ${p.salesMinor}, ${p.refundsMinor},
            ${p.feesMinor}, ${r.feeVatMinor}, ${p.payoutMinor}, ${p.pdfUrl}, ${r.source}, ${r.sortAt})
          ON CONFLICT (merchant_id, payout_id) DO NOTHING
          RETURNING id`
        if (!inserted) {
          const [existing] = yield* sql<{ id: string }>`
            SELECT id FROM settlement_payouts WHERE merchant_id = ${r.merchantId} AND payout_id = ${p.payoutId}`
          return { payoutRowId: existing!.id, created: false, chargebacks: 0 } satisfies StoredReport
        }
        let position = 0
        for (const a of r.adjustments) {
          yield* sql`
            INSERT INTO settlement_adjustments (payout_row_id, position, charge_id, type, description, date,
              debit_minor, credit_minor, net_minor, order_id, payment_id)
            VALUES (${inserted.id}, ${position++}, ${a.chargeId}, ${a.type}, ${a.description}, ${a.date}::date,
              ${a.debitMinor}, ${a.creditMinor}, ${a.netMinor}, ${a.orderId}, ${a.paymentId})`
        }
        let chargebacks = 0
        for (const c of r.chargebacks) {
          const match = yield* matchBooking(r.merchantId, c)
          const rows = yield* sql`
            INSERT INTO chargebacks (source_key, merchant_id, payout_row_id, order_id, payment_id, reference_id,
              booking_id, operator_id, amount_minor, currency, fee_minor, settled_currency, settled_amount_minor,
              settled_fee_minor, settled_on, transaction_date)
            VALUES (${c.sourceKey}, ${r.merchantId}, ${inserted.id}, ${c.orderId}, ${c.paymentId}, ${c.referenceId},
              ${Option.isSome(match) ? match.value.booking_id : null}, ${
            Option.isSome(match) ? match.value.operator_id : null
          },
              ${c.amountMinor}, ${c.currency}, ${c.feeMinor}, ${c.settledCurrency}, ${c.settledAmountMinor},
              ${c.settledFeeMinor}, ${c.settledOn}::date, ${c.transactionDate}::date)
            ON CONFLICT (source_key) DO NOTHING
            RETURNING id`
          chargebacks += rows.length
        }
        return { payoutRowId: inserted.id, created: true, chargebacks } satisfies StoredReport
      }))

    /** Chargebacks of the merchant that matched no booking yet, tried again; answers how many match now. */
    const rematch = (merchantId: string) =>
      Effect.gen(function*() {
        const open = yield* sql<
          { id: string; order_id: string | null; payment_id: string | null; reference_id: string | null }
        >`
          SELECT id, order_id, payment_id, reference_id FROM chargebacks
          WHERE merchant_id = ${merchantId} AND booking_id IS NULL`
        let matched = 0
        for (const c of open) {
          const match = yield* matchBooking(merchantId, {
            orderId: c.order_id,
            paymentId: c.payment_id,
            referenceId: c.reference_id
          })
          if (Option.isNone(match)) continue
          yield* sql`
            UPDATE chargebacks SET booking_id = ${match.value.booking_id}, operator_id = ${match.value.operator_id},
              updated_at = now()
            WHERE id = ${c.id} AND booking_id IS NULL`
          matched++
        }
        return matched
      })

    /** Sets the given facts (absent ones unchanged, null clears); None when there is no such chargeback. */
    const setDisputeFacts = (id: string, f: DisputeFacts) =>
      Effect.map(
        sql<{ id: string }>`
          UPDATE chargebacks SET
            dispute_reference = CASE WHEN ${f.disputeReference !== undefined}::boolean THEN ${
          f.disputeReference ?? null
        }
              ELSE dispute_reference END,
            dispute_status = CASE WHEN ${f.disputeStatus !== undefined}::boolean THEN ${
          f.disputeStatus ?? null
        } ELSE dispute_status END,
            reason = CASE WHEN ${f.reason !== undefined}::boolean THEN ${f.reason ?? null} ELSE reason END,
            respond_by = CASE WHEN ${f.respondBy !== undefined}::boolean THEN ${
          f.respondBy ?? null
        }::date ELSE respond_by END,
            registered_at = CASE WHEN ${f.registeredAt !== undefined}::boolean THEN ${f.registeredAt ?? null}::date
              ELSE registered_at END,
            updated_at = now()
          WHERE id = ${id}::uuid
          RETURNING id`,
        (rows) => rows.length > 0
      )

    const referenceTaken = (reference: string, id: string) =>
      Effect.map(
        sql<{ id: string }>`SELECT id FROM chargebacks WHERE dispute_reference = ${reference} AND id <> ${id}::uuid`,
        (rows) => rows.length > 0
      )

    /** Chargebacks for staff (the CLI), newest first: matched or not. */
    const listChargebacks = (merchantId: string | null, unmatchedOnly: boolean) =>
      sql<ChargebackListing>`
        SELECT id, merchant_id, booking_id, operator_id, order_id, payment_id, settled_amount_minor::text,
          to_char(settled_on, 'YYYY-MM-DD') AS settled_on, dispute_reference, dispute_status, first_seen_at
        FROM chargebacks
        WHERE (${merchantId}::text IS NULL OR merchant_id = ${merchantId})
          AND (NOT ${unmatchedOnly}::boolean OR booking_id IS NULL)
        ORDER BY first_seen_at DESC, id DESC`

    return repoEdge("SettlementsRepo", {
      merchants,
      known,
      setPartner,
      recordAttempt,
      storeReport,
      rematch,
      setDisputeFacts,
      referenceTaken,
      listChargebacks
    })
  })
}) {}
