import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A balance payment link of a booking only in the booking system (a manifest row, no service
 * booking) paid after that booking was cancelled: the payment is returned automatically
 * (src/partner/paymentLinks/LinkRefunds.ts; docs/decisions.md "Balance paid after a booking-system
 * booking was cancelled").
 *
 * `payment_link_refunds`: one row per money-returning call for such a payment, written in the same
 * transaction that records the link as paid, BEFORE any call, with our idempotency reference
 * (`<link reference>:refund:<seq>`), so that a retry after a crash or a lost answer sends the same
 * reference and the provider never returns the money twice. States as `booking_refunds`:
 * `requested` (call again with the same reference), `settling` (read its status), `completed`,
 * `partial` (a new row asks for the rest), `superseded` (a void refused because the payment
 * settled; a refund row replaces it), `failed` (the provider said no; alerted, a person looks).
 * `purchase_order_id` and `payment_id` are the provider's order behind the link and its payment.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE payment_link_refunds (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      link_id uuid NOT NULL REFERENCES payment_links(id),
      seq integer NOT NULL CHECK (seq >= 1),
      method text NOT NULL CHECK (method IN ('void', 'refund')),
      idempotency_reference text NOT NULL UNIQUE,
      merchant_id text NOT NULL,
      purchase_order_id text NOT NULL,
      payment_id text,
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      currency char(3) NOT NULL,
      paid_at timestamptz NOT NULL,
      -- Why the money goes back, for the person reading it.
      reason text NOT NULL,
      state text NOT NULL DEFAULT 'requested'
        CHECK (state IN ('requested', 'settling', 'completed', 'partial', 'superseded', 'failed')),
      refunded_minor bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor),
      provider_refund_order_id text,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      alerted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      UNIQUE (link_id, seq)
    );
    CREATE INDEX payment_link_refunds_due ON payment_link_refunds (next_attempt_at) WHERE state IN ('requested', 'settling');
  `))
