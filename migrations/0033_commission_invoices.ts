import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Commission invoices and credit notes (issue 15; src/invoices/, docs/api/invoices.md).
 *
 * `invoice_series`: one row per number series ('invoice' INV-…, 'credit_note' CN-…). A document takes
 * `last_number + 1` with an UPDATE of its series row inside the transaction that issues it: the row
 * lock orders concurrent issuers and a rolled-back issuing gives its number back, so each series runs
 * in one unbroken sequence (Norwegian bookkeeping rules; a PostgreSQL sequence would leave gaps).
 *
 * `commission_invoices`: the documents, per legal entity (`merchant_id`: the payout account at the
 * payment provider, operator_payment_accounts.merchant_id), delivery month and currency. Seller and
 * buyer are stored as they were at issue. Amounts in minor units of `currency`; a credit note's are
 * negative. Never edited after issue; there are no drafts. `list_key` is the read's order (delivery
 * month, then issue time).
 *
 * `commission_invoice_lines`: one line per booking (kind `commission` on an invoice, `refund_credit`
 * on a credit note, with the invoice it corrects and the cancellation fee kept, if any).
 *
 * `commission_invoice_entries`: which ledger entry (commission_entries, migration 0029) went on which
 * document; an entry is invoiced once.
 *
 * `commission_closes`: a legal entity's month that has been issued (issued once).
 *
 * `commission_invoice_files`: the PDF and the CSV specification as issued (re-issued by the admin CLI
 * from the same stored content).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE invoice_series (
      series text PRIMARY KEY CHECK (series IN ('invoice', 'credit_note')),
      prefix text NOT NULL,
      last_number bigint NOT NULL DEFAULT 0 CHECK (last_number >= 0),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO invoice_series (series, prefix) VALUES ('invoice', 'INV-'), ('credit_note', 'CN-');

    CREATE TABLE commission_invoices (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      type text NOT NULL CHECK (type IN ('invoice', 'credit_note')),
      series text NOT NULL REFERENCES invoice_series(series),
      sequence bigint NOT NULL CHECK (sequence > 0),
      number text NOT NULL UNIQUE,
      merchant_id text NOT NULL,
      period_month date NOT NULL CHECK (extract(day FROM period_month) = 1),
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      issue_date date NOT NULL,
      due_date date NOT NULL,
      issued_at timestamptz NOT NULL,
      seller_name text NOT NULL,
      seller_org_number text NOT NULL,
      seller_address text NOT NULL,
      seller_email text,
      seller_bank_account text,
      buyer_name text NOT NULL,
      buyer_org_number text,
      buyer_operator_ids uuid[] NOT NULL,
      vat_rate_percent numeric(5, 2) NOT NULL,
      net_minor bigint NOT NULL,
      vat_minor bigint NOT NULL,
      gross_minor bigint NOT NULL CHECK (gross_minor = net_minor + vat_minor),
      deducted_minor bigint NOT NULL,
      payable_minor bigint NOT NULL CHECK (payable_minor = gross_minor - deducted_minor),
      status text NOT NULL CHECK (status IN ('open', 'settled', 'credited')),
      list_key bigint NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (series, sequence),
      UNIQUE (merchant_id, period_month, type, currency),
      CHECK ((type = 'invoice') = (series = 'invoice'))
    );
    CREATE INDEX commission_invoices_list ON commission_invoices (merchant_id, list_key DESC, id DESC);

    CREATE TABLE commission_invoice_lines (
      invoice_id uuid NOT NULL REFERENCES commission_invoices(id),
      line_no int NOT NULL CHECK (line_no > 0),
      kind text NOT NULL CHECK (kind IN ('commission', 'refund_credit')),
      booking_id uuid NOT NULL REFERENCES bookings(id),
      operator_id uuid NOT NULL REFERENCES operators(id),
      operator_name text NOT NULL,
      confirmation_code text NOT NULL,
      tour text,
      experience_date date,
      first_occurred_at timestamptz NOT NULL,
      description text NOT NULL,
      commission_rate_percent numeric(6, 3),
      booking_gross_minor bigint NOT NULL,
      net_minor bigint NOT NULL,
      vat_minor bigint NOT NULL,
      gross_minor bigint NOT NULL CHECK (gross_minor = net_minor + vat_minor),
      deducted_minor bigint NOT NULL,
      corrects_invoice_id uuid REFERENCES commission_invoices(id),
      original_net_minor bigint,
      cancellation_fee_minor bigint,
      PRIMARY KEY (invoice_id, line_no)
    );
    CREATE INDEX commission_invoice_lines_by_booking ON commission_invoice_lines (booking_id, kind);

    CREATE TABLE commission_invoice_entries (
      entry_id uuid PRIMARY KEY REFERENCES commission_entries(id),
      invoice_id uuid NOT NULL REFERENCES commission_invoices(id)
    );
    CREATE INDEX commission_invoice_entries_by_invoice ON commission_invoice_entries (invoice_id);

    CREATE TABLE commission_closes (
      merchant_id text NOT NULL,
      period_month date NOT NULL,
      closed_at timestamptz NOT NULL,
      documents int NOT NULL,
      PRIMARY KEY (merchant_id, period_month)
    );

    CREATE TABLE commission_invoice_files (
      invoice_id uuid NOT NULL REFERENCES commission_invoices(id),
      kind text NOT NULL CHECK (kind IN ('pdf', 'csv')),
      content bytea NOT NULL,
      sha256 text NOT NULL,
      generated_at timestamptz NOT NULL,
      reissues int NOT NULL DEFAULT 0,
      PRIMARY KEY (invoice_id, kind)
    );
  `))
