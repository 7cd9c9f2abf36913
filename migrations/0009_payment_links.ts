import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Balance payment links (POST /api/v1/bookings/{id}/payment-link, docs/api/writes.md).
 *
 * `operator_payment_accounts`: the operator's merchant at the payment provider (Surfboard
 * `MERCHANT-ID`) and its payment page terminal. The partner credentials and base URL come from
 * configuration (SURFBOARD_*) unless the row carries its own (sandbox merchants); an operator
 * without a row cannot send payment links.
 *
 * `payment_links`: one row per link we asked the provider for. The row is written in state
 * `creating` with our idempotency reference BEFORE the provider is called, so that a retry after a
 * crash or a lost answer sends the same reference and never makes a second link; it becomes `open`
 * (with the provider's id and URL) in the transaction that enqueues the guest's email, and `closed`
 * when the provider says it is paid, expired or cancelled, or when it no longer matches the balance.
 * At most one `creating` row per target at a time.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE operator_payment_accounts (
      operator_id uuid PRIMARY KEY REFERENCES operators(id) ON DELETE CASCADE,
      merchant_id text NOT NULL CHECK (length(merchant_id) BETWEEN 1 AND 200),
      payment_page_terminal_id text,
      -- A merchant reached with its own base URL and credentials instead of SURFBOARD_* (the
      -- Surfboard sandbox's merchants for the demo and test keys): all three or none.
      base_url text,
      api_key text,
      api_secret text,
      CHECK ((base_url IS NULL) = (api_key IS NULL) AND (api_key IS NULL) = (api_secret IS NULL)),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE payment_links (
      id uuid PRIMARY KEY,
      -- 'booking:<uuid>' (a service booking) or 'row:<uuid>' (a booking-system-only manifest row).
      target text NOT NULL,
      booking_id uuid REFERENCES bookings(id),
      manifest_row_id uuid REFERENCES manifest_rows(id),
      operator_id uuid NOT NULL REFERENCES operators(id),
      kind text NOT NULL CHECK (kind IN ('deferred_balance', 'provider_balance')),
      amount_minor bigint NOT NULL CHECK (amount_minor > 0),
      currency char(3) NOT NULL,
      merchant_id text NOT NULL,
      idempotency_reference text NOT NULL UNIQUE,
      -- The request sent with that reference, kept so that a retry sends exactly the same one.
      provider_reference_id text NOT NULL,
      description text NOT NULL,
      state text NOT NULL CHECK (state IN ('creating', 'open', 'closed')),
      provider_link_id text,
      url text,
      expires_at timestamptz,
      closed_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((booking_id IS NULL) <> (manifest_row_id IS NULL)),
      CHECK (state <> 'open' OR (provider_link_id IS NOT NULL AND url IS NOT NULL))
    );
    CREATE UNIQUE INDEX payment_links_one_creating ON payment_links (target) WHERE state = 'creating';
    CREATE INDEX payment_links_live ON payment_links (target, created_at DESC) WHERE state <> 'closed';
  `))
