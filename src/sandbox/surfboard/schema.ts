/**
 * The Surfboard sandbox's own tables, in schema `surfboard_sandbox`: a separate system that shares
 * only the PostgreSQL server with the service (never part of the service's migrations). Created at
 * start, idempotently, under an advisory lock so that two sandboxes starting on one database do not
 * race.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TOKENS_DDL } from "./merchantInitiated.js"

const DDL = `
  CREATE SCHEMA IF NOT EXISTS surfboard_sandbox;

  -- Who calls: partner credentials (API-KEY, API-SECRET) act for the partner's merchants.
  CREATE TABLE IF NOT EXISTS surfboard_sandbox.partners (
    id text PRIMARY KEY,
    name text NOT NULL,
    api_key text NOT NULL UNIQUE,
    api_secret text NOT NULL,
    created_at timestamptz NOT NULL
  );

  CREATE TABLE IF NOT EXISTS surfboard_sandbox.merchants (
    id text PRIMARY KEY,
    partner_id text NOT NULL REFERENCES surfboard_sandbox.partners(id) ON DELETE CASCADE,
    name text NOT NULL,
    country text NOT NULL,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS merchants_by_partner ON surfboard_sandbox.merchants (partner_id);

  -- card: an in-store terminal (a card is presented); PaymentPage: an online terminal with hosted pages.
  CREATE TABLE IF NOT EXISTS surfboard_sandbox.terminals (
    id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES surfboard_sandbox.merchants(id) ON DELETE CASCADE,
    name text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('card', 'PaymentPage'))
  );
  CREATE INDEX IF NOT EXISTS terminals_by_merchant ON surfboard_sandbox.terminals (merchant_id);

  CREATE TABLE IF NOT EXISTS surfboard_sandbox.orders (
    id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES surfboard_sandbox.merchants(id) ON DELETE CASCADE,
    terminal_id text NOT NULL REFERENCES surfboard_sandbox.terminals(id),
    reference_id text,
    type text NOT NULL CHECK (type IN ('purchase', 'return')),
    purchase_order_id text REFERENCES surfboard_sandbox.orders(id),
    -- PENDING, PAYMENT_PROCESSED, PAYMENT_COMPLETED, PARTIAL_PAYMENT_COMPLETED, PAYMENT_CANCELLED
    status text NOT NULL,
    -- Numeric ISO 4217, as sent.
    currency text NOT NULL,
    -- Minor units, positive for a purchase and for a return alike.
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    -- The order as it was sent (lines, totals, control functions): GET /orders/:id answers it.
    body jsonb NOT NULL,
    page_token text,
    page_expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS orders_by_purchase ON surfboard_sandbox.orders (purchase_order_id) WHERE purchase_order_id IS NOT NULL;
  CREATE INDEX IF NOT EXISTS orders_by_reference ON surfboard_sandbox.orders (merchant_id, reference_id);
  CREATE INDEX IF NOT EXISTS orders_open_pages ON surfboard_sandbox.orders (page_expires_at) WHERE status = 'PENDING' AND page_expires_at IS NOT NULL;

  CREATE TABLE IF NOT EXISTS surfboard_sandbox.payments (
    id text PRIMARY KEY,
    order_id text NOT NULL REFERENCES surfboard_sandbox.orders(id) ON DELETE CASCADE,
    -- PAYMENT_INITIATED, PAYMENT_PROCESSING, PAYMENT_COMPLETED, PAYMENT_FAILED, PAYMENT_CANCELLED
    status text NOT NULL,
    method text,
    amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
    failure_reason text,
    -- A refund still settling: what it will return, and when (NULL with settle_on_request: when told).
    settle_amount_minor bigint,
    settles_at timestamptz,
    settle_on_request boolean NOT NULL DEFAULT false,
    -- VOID_INITIATED or VOIDED once a void was asked for; settling like a refund.
    void_status text,
    void_settles_at timestamptz,
    void_on_request boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    completed_at timestamptz
  );
  CREATE INDEX IF NOT EXISTS payments_by_order ON surfboard_sandbox.payments (order_id);
  CREATE INDEX IF NOT EXISTS payments_settling ON surfboard_sandbox.payments (settles_at) WHERE status = 'PAYMENT_PROCESSING';
  CREATE INDEX IF NOT EXISTS payments_voiding ON surfboard_sandbox.payments (void_settles_at) WHERE void_status = 'VOID_INITIATED';

  CREATE TABLE IF NOT EXISTS surfboard_sandbox.transactions (
    id text PRIMARY KEY,
    order_id text NOT NULL REFERENCES surfboard_sandbox.orders(id) ON DELETE CASCADE,
    payment_id text NOT NULL REFERENCES surfboard_sandbox.payments(id) ON DELETE CASCADE,
    merchant_id text NOT NULL,
    terminal_id text NOT NULL,
    reference_id text,
    type text NOT NULL CHECK (type IN ('PURCHASE', 'RETURN')),
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    currency text NOT NULL,
    voided boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
  );
  CREATE INDEX IF NOT EXISTS transactions_by_order ON surfboard_sandbox.transactions (order_id);
  CREATE INDEX IF NOT EXISTS transactions_by_payment ON surfboard_sandbox.transactions (payment_id);

  -- Answers to keyed calls: the same key with the same request gets the same answer again.
  CREATE TABLE IF NOT EXISTS surfboard_sandbox.idempotency (
    merchant_id text NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    status integer NOT NULL,
    body jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, key)
  );
`

export const createSandboxSchema = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(hashtext('surfboard_sandbox.schema'))`,
      Effect.zipRight(sql.unsafe(DDL), sql.unsafe(TOKENS_DDL))
    )
  )).pipe(Effect.asVoid, Effect.withSpan("SurfboardSandbox.createSchema"))

/** Number of tables the schema holds (tests check none is missing): 8 here (card_tokens among them), 1 in reports.ts. */
export const SANDBOX_TABLES = 9
