import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Quickbook booking after payment (spec quickbook-api-v1 §4 POST /book, GET /sales; decisions in
 * docs/decisions.md "Quickbook: book"):
 * - `quickbook_terminals.payment_terminal_id`: the card terminal at the payment provider that this
 *   desk terminal takes payments on; a payment taken on another terminal does not match the sale.
 *   A desk terminal without one cannot charge (403 tour_not_sellable_here on quote).
 * - on the sale: who the guest is and in which language (email, ticket), the payment that pays it
 *   (`paid_by_payment_id`, one per sale), the booking system's booking (`booking_id`,
 *   `booking_code`, the code on the ticket) and when it was confirmed or failed, and why.
 * - `tours.requires_phone`: the operator needs the guest's phone number for this tour (a booking
 *   without one fails `phone_required`).
 * - `quickbook_payments`: one row per payment presented to POST /book, keyed by (provider,
 *   payment_id), recorded before anything else (src/quickbook/book/QuickbookBook.ts). It keeps the
 *   request, what the provider confirmed (amount, currency, merchant, paid_at), its `state`
 *   (received → verified → booking → confirmed, or → refunding → refunded; mismatch), its `role`
 *   (the payment of the sale, or a duplicate), the hold it confirms (null: seats booked directly;
 *   fixed before the booking system is called, so a retry books the same way), the failure reason,
 *   the answer given (repeated on a retry), the refund in progress (method, our idempotency reference recorded before each call,
 *   the provider's refund order, attempts) and a lease: a row not final whose lease ran out is
 *   finished by the quickbook-recovery job.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE quickbook_terminals ADD COLUMN payment_terminal_id text;

    ALTER TABLE quickbook_sales
      ADD COLUMN customer jsonb,
      ADD COLUMN language text CHECK (language IN ('en', 'nb')),
      ADD COLUMN paid_by_payment_id text,
      ADD COLUMN booking_id text,
      ADD COLUMN booking_code text,
      ADD COLUMN confirmed_at timestamptz,
      ADD COLUMN failed_at timestamptz,
      ADD COLUMN failure_reason text,
      ADD CONSTRAINT quickbook_sales_confirmed_has_booking
        CHECK (status <> 'confirmed' OR (booking_code IS NOT NULL AND confirmed_at IS NOT NULL AND customer IS NOT NULL AND language IS NOT NULL));

    ALTER TABLE tours ADD COLUMN requires_phone boolean NOT NULL DEFAULT false;

    CREATE TABLE quickbook_payments (
      provider text NOT NULL CHECK (provider IN ('payprovider')),
      payment_id text NOT NULL,
      order_id text NOT NULL,
      sale_reference text NOT NULL REFERENCES quickbook_sales(reference),
      terminal_id uuid NOT NULL REFERENCES quickbook_terminals(id),
      payment_terminal_id text,
      request jsonb NOT NULL,
      amount_minor bigint CHECK (amount_minor >= 0),
      currency char(3),
      merchant_id text,
      paid_at timestamptz,
      state text NOT NULL DEFAULT 'received'
        CHECK (state IN ('received', 'verified', 'booking', 'confirmed', 'refunding', 'refunded', 'mismatch')),
      role text CHECK (role IN ('sale', 'duplicate')),
      hold_id text,
      failure_reason text,
      detail text,
      answer jsonb,
      refund_method text CHECK (refund_method IN ('void', 'refund')),
      refund_seq int NOT NULL DEFAULT 0,
      refund_reference text,
      refund_order_id text,
      refund_state text CHECK (refund_state IN ('requested', 'settling', 'completed', 'failed')),
      refunded_minor bigint NOT NULL DEFAULT 0,
      refund_attempts int NOT NULL DEFAULT 0,
      alerted_at timestamptz,
      last_error text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (provider, payment_id),
      CONSTRAINT quickbook_payments_verified_has_facts
        CHECK (state IN ('received', 'mismatch') OR (amount_minor IS NOT NULL AND currency IS NOT NULL AND paid_at IS NOT NULL AND role IS NOT NULL)),
      CONSTRAINT quickbook_payments_refunding_has_reference
        CHECK (state NOT IN ('refunding', 'refunded') OR (refund_reference IS NOT NULL AND refund_method IS NOT NULL AND failure_reason IS NOT NULL))
    );
    CREATE INDEX quickbook_payments_by_sale ON quickbook_payments (sale_reference);
    CREATE INDEX quickbook_payments_open ON quickbook_payments (lease_until)
      WHERE state IN ('received', 'verified', 'booking', 'refunding');
  `))
