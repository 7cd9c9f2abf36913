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
  `))
