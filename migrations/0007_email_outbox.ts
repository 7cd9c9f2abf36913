import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The transactional email outbox and the local mailbox. See docs/email.md.
 *
 * A message is written into `email_outbox` in the same transaction as the state change it tells
 * about, fully rendered, and sent later by the outbox sender job. `dedupe_key` makes a replayed
 * write enqueue nothing new. `mail_mailbox` receives what is "sent" when no SMTP server is
 * configured (SMTP_URL unset), so that every instance on the database shares one mailbox.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE email_outbox (
      id uuid PRIMARY KEY,
      -- What this email is about, e.g. booking:<id>:cancelled:guest. One message per key, ever.
      dedupe_key text NOT NULL CHECK (length(dedupe_key) BETWEEN 1 AND 500),
      template text NOT NULL,
      locale text NOT NULL CHECK (locale IN ('en', 'nb')),
      -- The template's data as given to enqueue (the message below was rendered from it).
      data jsonb NOT NULL,
      operator_id uuid REFERENCES operators(id),
      -- A booking id or a manifest row id (a booking only the booking system has): no foreign key.
      booking_id uuid,
      -- RFC 5322 Message-ID, fixed at enqueue: every attempt sends the same one.
      message_id text NOT NULL,
      from_address text NOT NULL,
      to_addresses text[] NOT NULL,
      reply_to text,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text,
      -- pending: waits for next_attempt_at; sending: claimed by a sender until locked_until;
      -- sent; failed: permanently refused, out of attempts, or never sendable (bad address).
      status text NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claim_token uuid,
      locked_until timestamptz,
      last_error text,
      -- The transport's answer to the attempt that sent it (e.g. "250 2.0.0 OK queued").
      transport_response text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      failed_at timestamptz,
      CHECK ((status = 'sending') = (claim_token IS NOT NULL AND locked_until IS NOT NULL))
    );
    CREATE UNIQUE INDEX email_outbox_dedupe ON email_outbox (dedupe_key);
    CREATE UNIQUE INDEX email_outbox_message_id ON email_outbox (message_id);
    -- The sender's two claims: due pending messages, and claims whose sender died (lease over).
    CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at) WHERE status = 'pending';
    CREATE INDEX email_outbox_leases ON email_outbox (locked_until) WHERE status = 'sending';
    CREATE INDEX email_outbox_by_status ON email_outbox (status, created_at DESC);
    CREATE INDEX email_outbox_by_booking ON email_outbox (booking_id) WHERE booking_id IS NOT NULL;

    -- What the local mailbox received: one row per delivery (a message delivered twice shows twice).
    CREATE TABLE mail_mailbox (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      delivered_at timestamptz NOT NULL DEFAULT now(),
      message_id text NOT NULL,
      from_address text NOT NULL,
      -- Lower-cased, for the CLI's --to filter.
      to_addresses text[] NOT NULL,
      reply_to text,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text,
      headers jsonb NOT NULL DEFAULT '{}'
    );
    CREATE INDEX mail_mailbox_by_recipient ON mail_mailbox USING gin (to_addresses);
    CREATE INDEX mail_mailbox_by_message_id ON mail_mailbox (message_id);
  `))
