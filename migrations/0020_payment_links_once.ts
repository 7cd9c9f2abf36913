import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One link and one email per balance (src/partner/paymentLinks/PaymentLinks.ts; docs/api/writes.md "Payment link").
 *
 * `payment_links` gains `email_outbox_id` and `emailed_at`: the guest's email last enqueued for the
 * link and when. A request that sends the link again within LINK_EMAIL_WINDOW_SECONDS (10 minutes,
 * src/partner/paymentLinks/rules.ts) of that email does not email it again (it answers that email's
 * outcome), so concurrent or repeated calls email a link once per window.
 *
 * Indexes for the look-ups a `provider_balance` link makes: the rows of one booking-system booking
 * (its first row is where its links are kept, whichever line the request names), and the desk sale
 * behind a booking-system booking (money this service collected at the desk).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE payment_links ADD COLUMN email_outbox_id uuid;
    ALTER TABLE payment_links ADD COLUMN emailed_at timestamptz;
    CREATE INDEX manifest_rows_by_booking ON manifest_rows (account_id, booking_id);
    CREATE INDEX quickbook_sales_by_booking ON quickbook_sales (booking_id) WHERE booking_id IS NOT NULL;
  `))
