import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Payouts and chargebacks (issue 15 part A; docs/api/payouts.md, docs/api/chargebacks.md), imported
 * from the payment provider's settlement reports by the `settlement-import` job or from a settlement
 * file by the admin CLI (src/settlements/):
 *
 * - `settlement_payouts`: one row per payout (settlement report) of a merchant, unique on
 *   `(merchant_id, payout_id)`: importing the same report twice changes nothing. Amounts as the
 *   provider reports them (NOK minor units; refunds negative; `payout_minor` as reported, negative
 *   when the charges exceeded the sales). A payout belongs to the merchant (the legal entity): every
 *   operator whose `operator_payment_accounts.merchant_id` it is sees it. `sort_at` is the
 *   settlement day at 00:00 UTC (the import time when the report has no day): the list's order.
 * - `settlement_adjustments`: the report's itemised charges in their order (service-provider fee,
 *   chargeback, chargeback fee, partner fee, previous pending liability…), debit / credit / net.
 * - `chargebacks`: one row per chargeback charge (`source_key` 'charge:<merchant>:<payout>:<charge>'),
 *   matched to a booking through the order / payment it names (booking_payments, payment_links,
 *   quickbook payments, or the order's reference); `booking_id` / `operator_id` null when it matches
 *   none of the merchant's operators' bookings (stored, never listed; matching is tried again at
 *   every import). The dispute desk's facts (`dispute_reference`, `dispute_status`, `reason`,
 *   `respond_by`, `registered_at`) are set by staff with the admin CLI. `first_seen_at`: when the
 *   service first learnt of it (the list's day and order).
 * - `settlement_merchants`: per merchant, the provider partner it belongs to (Surfboard's report
 *   path names it; else SURFBOARD_PARTNER_ID) and the last import's outcome.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE settlement_merchants (
      merchant_id text PRIMARY KEY CHECK (length(merchant_id) BETWEEN 1 AND 200),
      provider_partner_id text,
      last_attempt_at timestamptz,
      last_outcome text CHECK (last_outcome IN ('ok', 'failed')),
      last_error text,
      last_imported_at timestamptz
    );

    CREATE TABLE settlement_payouts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      merchant_id text NOT NULL,
      payout_id text NOT NULL CHECK (length(payout_id) BETWEEN 1 AND 200),
      settlement_date date,
      transactions_from date,
      transactions_to date,
      report_type text CHECK (report_type IN ('DAILY', 'WEEKLY', 'MONTHLY')),
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      sales_minor bigint NOT NULL,
      refunds_minor bigint NOT NULL CHECK (refunds_minor <= 0),
      fees_minor bigint NOT NULL,
      fee_vat_minor bigint NOT NULL,
      payout_minor bigint NOT NULL,
      pdf_url text,
      source text NOT NULL CHECK (source IN ('provider', 'file')),
      sort_at timestamptz NOT NULL,
      imported_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (merchant_id, payout_id)
    );
    CREATE INDEX settlement_payouts_by_merchant ON settlement_payouts (merchant_id, sort_at DESC, id DESC);
    CREATE INDEX settlement_payouts_by_day ON settlement_payouts (merchant_id, settlement_date);

    CREATE TABLE settlement_adjustments (
      payout_row_id uuid NOT NULL REFERENCES settlement_payouts(id) ON DELETE CASCADE,
      position integer NOT NULL,
      charge_id text NOT NULL,
      type text NOT NULL,
      description text NOT NULL,
      date date,
      debit_minor bigint NOT NULL CHECK (debit_minor >= 0),
      credit_minor bigint NOT NULL CHECK (credit_minor >= 0),
      net_minor bigint NOT NULL,
      order_id text,
      payment_id text,
      PRIMARY KEY (payout_row_id, position)
    );

    CREATE TABLE chargebacks (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      source_key text NOT NULL UNIQUE,
      merchant_id text NOT NULL,
      payout_row_id uuid REFERENCES settlement_payouts(id) ON DELETE SET NULL,
      order_id text,
      payment_id text,
      reference_id text,
      booking_id uuid REFERENCES bookings(id),
      operator_id uuid REFERENCES operators(id),
      amount_minor bigint,
      currency char(3) CHECK (currency ~ '^[A-Z]{3}$'),
      fee_minor bigint,
      settled_currency char(3),
      settled_amount_minor bigint,
      settled_fee_minor bigint,
      settled_on date,
      transaction_date date,
      dispute_reference text,
      dispute_status text,
      reason text,
      respond_by date,
      registered_at date,
      first_seen_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((booking_id IS NULL) = (operator_id IS NULL))
    );
    CREATE INDEX chargebacks_by_operator ON chargebacks (operator_id, first_seen_at DESC, id DESC)
      WHERE operator_id IS NOT NULL;
    CREATE INDEX chargebacks_unmatched ON chargebacks (merchant_id) WHERE booking_id IS NULL;
    CREATE UNIQUE INDEX chargebacks_dispute_reference ON chargebacks (dispute_reference)
      WHERE dispute_reference IS NOT NULL;
  `))
