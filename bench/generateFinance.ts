/**
 * The finance lists' dataset (`npm run bench:finance`, issue 15), added to the bookings dataset of
 * bench/generate.ts (1,000,000 bookings of 100 operators over the two years before it was
 * generated). A year of finance records: the twelve whole months (UTC) before the month the
 * finance data is generated in, and that month so far.
 *
 * bench/generate.ts bulk-loads the bookings with the triggers off (`session_replication_role =
 * replica`) after the migrations ran, so neither migration 0031 (pay-later charges) nor 0032 (the
 * commission ledger) wrote anything for them. Here, in SQL, in one transaction:
 *
 * - `pay_later_charges`: migration 0031's backfill statement verbatim, for the pay-later bookings
 *   whose balance is charged in the year (about 137,000 of the dataset's 165,000: no pay-later
 *   bookings need adding), then, so every state and flag of the list shows: a third of the failed
 *   ones retrying (1–3 attempts, a next attempt, a failure message), the others failed for good
 *   (3 attempts); collected ones with 1 attempt.
 * - `commission_entries`: migration 0032's backfill statements verbatim (sales in booking order,
 *   then cancellations; the statement numbers by its trigger), for the bookings booked in the year
 *   (about 770,000 entries).
 * - `operator_payment_accounts`: a payout account (merchant) per operator, operators #11–#30 two by
 *   two on shared accounts (#11+#12, …): 90 accounts.
 * - `settlement_payouts` + `settlement_adjustments`: a DAILY payout per account and day of the year
 *   (about 35,000 payouts), each with a service-provider fee, every 7th day a partner fee, every
 *   30th a chargeback and its fee, every 45th a previous pending liability (2–5 adjustments).
 * - `chargebacks`: one for about 1 in 400 of the year's sold bookings (about 1,900), matched to the
 *   booking, first seen 20–60 days after it was booked, in every dispute state; 50 unmatched.
 * - Commission invoices and credit notes: the twelve months closed oldest first by the service's own
 *   code (InvoiceIssuing.closeMonth, the commission-close job's), with their PDF and CSV files.
 * - A key with `finance:read` over operators #1–#5 and #71–#75 (NOK and EUR), created by operator
 *   #1's owner, who administers them.
 *
 * The `bench_meta` row `finance` records it; a later run reuses it.
 */
import { Effect, Layer } from "effect"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { InvoiceIssuing } from "../src/invoices/InvoiceIssuing.js"
import { type BenchKey, createKey, ensureDataset } from "./generate.js"
import { migrate } from "./generateTours.js"
import { benchServer } from "./server.js"
import { readSettings } from "./settings.js"

export const FINANCE_GENERATOR_VERSION = 1
/** Operator numbers of the finance key: five Norwegian (NOK) and five Portuguese (EUR) operators. */
export const FINANCE_KEY_OPERATORS = [1, 2, 3, 4, 5, 71, 72, 73, 74, 75]
export const FINANCE_MONTHS = 12

export interface FinanceDatasetInfo {
  readonly version: number
  readonly generatedAt: string
  /** The first day (UTC) of the finance year: the first of the twelve closed months. */
  readonly since: string
  readonly months: ReadonlyArray<string>
  readonly key: BenchKey
  readonly counts: Record<string, number>
  readonly seconds: number
}

const log = (line: string) => console.log(`[generate-finance] ${line}`)

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

const existing = (url: string) =>
  withClient(url, async (c) => {
    const meta = await c.query<{ value: FinanceDatasetInfo }>("SELECT value FROM bench_meta WHERE name = 'finance'")
    const info = meta.rows[0]?.value
    if (!info || info.version !== FINANCE_GENERATOR_VERSION) return undefined
    const key = await c.query("SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [info.key.id])
    return key.rowCount === 1 ? info : undefined
  })

/** Migration 0031's backfill, limited to the charges of the year. */
const payLaterSql = `
  INSERT INTO pay_later_charges (booking_id, operator_id, amount_minor, currency, charge_at, final_deadline_at, state,
    collected_at, refunded, link_emailed_at)
  SELECT b.id, b.operator_id, b.pay_later_amount_minor, coalesce(b.pay_later_currency, b.currency),
    coalesce(b.pay_later_charge_at, b.booked_at, b.created_at),
    pay_later_deadline(coalesce(b.pay_later_charge_at, b.booked_at, b.created_at), b.experience_date, b.timezone),
    CASE WHEN b.pay_later_status IN ('upcoming', 'failed', 'collected', 'cancelled') THEN b.pay_later_status
         ELSE 'upcoming' END,
    CASE WHEN b.pay_later_status = 'collected' THEN coalesce(b.pay_later_paid_at, b.created_at) END,
    b.pay_later_status = 'cancelled' AND b.pay_later_paid_at IS NOT NULL,
    CASE WHEN b.pay_later_status = 'failed' THEN now() END
  FROM bookings b
  WHERE b.payment_strategy = 'pay_later' AND b.pay_later_status IS NOT NULL
    AND coalesce(b.pay_later_charge_at, b.booked_at, b.created_at) >= $1::timestamptz
  ORDER BY coalesce(b.pay_later_charge_at, b.booked_at, b.created_at), b.id
  ON CONFLICT (booking_id) DO NOTHING`

const payLaterAttemptsSql = `
  UPDATE pay_later_charges SET
    attempts = CASE WHEN state = 'collected' THEN 1 WHEN state = 'failed' THEN
      CASE WHEN hashtext(id::text) % 3 = 0 THEN 1 + abs(hashtext(id::text)) % 2 ELSE 3 END ELSE 0 END,
    retrying = state = 'failed' AND hashtext(id::text) % 3 = 0,
    last_attempt_at = CASE WHEN state IN ('collected', 'failed') THEN least(charge_at + interval '2 hours', now()) END,
    next_attempt_at = CASE WHEN state = 'failed' AND hashtext(id::text) % 3 = 0 THEN charge_at + interval '1 day' END,
    failure_message = CASE WHEN state = 'failed' THEN
      CASE WHEN hashtext(id::text) % 3 = 0 THEN 'The card was declined (insufficient funds); trying again.'
           ELSE 'The card was declined; a payment link was e-mailed to the guest.' END END
  WHERE state IN ('collected', 'failed')`

/** Migration 0032's backfill, limited to the bookings booked in the year. */
const commissionSql = [
  `INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
    commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
  SELECT b.id, b.operator_id, 'sale', coalesce(b.booked_at, b.created_at), b.currency, b.amount_minor,
    coalesce(b.commission_rate_percent, 0), commission_of(b), commission_reserve_fee(b), commission_balance_open(b),
    'sale:' || b.id
  FROM bookings b
  WHERE commission_has(b) AND (b.status IN ('RESERVED', 'CONFIRMED')
    OR (b.status IN ('CANCELLED', 'REFUNDED') AND b.booked_at IS NOT NULL))
    AND coalesce(b.booked_at, b.created_at) >= $1::timestamptz
  ORDER BY coalesce(b.booked_at, b.created_at), b.id
  ON CONFLICT (source_key) DO NOTHING`,
  `INSERT INTO commission_entries (booking_id, operator_id, type, occurred_at, currency, gross_minor,
    commission_rate_percent, commission_minor, reserve_fee_minor, pending, source_key)
  SELECT b.id, b.operator_id, 'cancellation', greatest(coalesce(b.updated_at, b.booked_at), b.booked_at), b.currency,
    -b.amount_minor, coalesce(b.commission_rate_percent, 0), -commission_of(b), -commission_reserve_fee(b),
    commission_refund_open(b.id), 'cancellation:' || b.id
  FROM bookings b
  WHERE commission_has(b) AND b.status IN ('CANCELLED', 'REFUNDED') AND b.booked_at IS NOT NULL
    AND (b.amount_minor, commission_of(b), commission_reserve_fee(b)) <> (0, 0, 0)
    AND coalesce(b.booked_at, b.created_at) >= $1::timestamptz
  ORDER BY greatest(coalesce(b.updated_at, b.booked_at), b.booked_at), b.id
  ON CONFLICT (source_key) DO NOTHING`
]

const accountsSql = `
  INSERT INTO operator_payment_accounts (operator_id, merchant_id)
  SELECT id, 'bench-merchant-' || lpad((CASE WHEN n BETWEEN 11 AND 30 THEN 11 + (n - 11) / 2 * 2 ELSE n END)::text, 3, '0')
  FROM unnest($1::uuid[]) WITH ORDINALITY AS o(id, n)
  ON CONFLICT (operator_id) DO UPDATE SET merchant_id = excluded.merchant_id`

const payoutsSql = `
  INSERT INTO settlement_payouts (merchant_id, payout_id, settlement_date, transactions_from, transactions_to,
    report_type, currency, sales_minor, refunds_minor, fees_minor, fee_vat_minor, payout_minor, source, sort_at)
  SELECT m.merchant_id, 'PO-' || m.merchant_id || '-' || to_char(d, 'YYYYMMDD'), d::date, d::date - 1, d::date - 1,
    'DAILY', m.currency, s.sales, -s.refunds, s.fees, s.fees / 4, s.sales - s.refunds - s.fees - s.fees / 4, 'provider',
    d::date::timestamp AT TIME ZONE 'UTC'
  FROM (SELECT a.merchant_id, min(trim(b.currency)) AS currency
        FROM operator_payment_accounts a
        JOIN LATERAL (SELECT currency FROM bookings WHERE operator_id = a.operator_id LIMIT 1) b ON true
        GROUP BY a.merchant_id) m
  CROSS JOIN generate_series($1::date, current_date - 1, interval '1 day') d
  CROSS JOIN LATERAL (SELECT 200000 + abs(hashtext(m.merchant_id || d::text)) % 2000000 AS sales,
    CASE WHEN abs(hashtext(d::text || m.merchant_id)) % 5 = 0 THEN 50000 + abs(hashtext(d::text)) % 200000 ELSE 0 END
      AS refunds,
    5000 + abs(hashtext(m.merchant_id || d::text)) % 40000 AS fees) s`

const adjustmentsSql = `
  INSERT INTO settlement_adjustments (payout_row_id, position, charge_id, type, description, date, debit_minor,
    credit_minor, net_minor, order_id, payment_id)
  SELECT p.id, a.position, p.payout_id || '-' || a.position, a.type, a.description, p.settlement_date - 1, a.debit,
    a.credit, a.credit - a.debit, a.order_id, NULL
  FROM settlement_payouts p
  CROSS JOIN LATERAL (
    SELECT * FROM (VALUES
      (1, 'SERVICE_PROVIDER_FEE', 'Card acquiring fees', p.fees_minor, 0::bigint, NULL::text, true),
      (2, 'PARTNER_FEE', 'Marketplace partner fee', 2500::bigint, 0::bigint, NULL::text,
        extract(doy FROM p.settlement_date)::int % 7 = 0),
      (3, 'CHARGEBACK', 'Chargeback of order ' || p.payout_id, 45000::bigint, 0::bigint, 'order-' || p.payout_id,
        extract(doy FROM p.settlement_date)::int % 30 = 0),
      (4, 'CHARGEBACK_FEE', 'Chargeback fee', 15000::bigint, 0::bigint, NULL::text,
        extract(doy FROM p.settlement_date)::int % 30 = 0),
      (5, 'PREVIOUS_PENDING_LIABILITY', 'Pending liability carried from the previous payout', 0::bigint,
        12000::bigint, NULL::text, extract(doy FROM p.settlement_date)::int % 45 = 0)
    ) v(position, type, description, debit, credit, order_id, included)
    WHERE v.included
  ) a`

const DISPUTE_STATES = ["triage", "evidence_requested", "responded", "won", "lost", "accepted"]

const chargebacksSql = `
  INSERT INTO chargebacks (source_key, merchant_id, order_id, payment_id, reference_id, booking_id, operator_id,
    amount_minor, currency, fee_minor, settled_currency, settled_amount_minor, settled_fee_minor, settled_on,
    transaction_date, dispute_reference, dispute_status, reason, respond_by, registered_at, first_seen_at, updated_at)
  SELECT 'charge:' || a.merchant_id || ':bench:' || b.id, a.merchant_id, 'order-' || b.id, 'payment-' || b.id,
    b.confirmation_code, b.id, b.operator_id, b.amount_minor, b.currency, 15000,
    CASE WHEN k % 4 <> 0 THEN 'NOK' END, CASE WHEN k % 4 <> 0 THEN -b.amount_minor END,
    CASE WHEN k % 4 <> 0 THEN -15000 END, CASE WHEN k % 4 <> 0 THEN (seen + interval '3 days')::date END,
    coalesce(b.booked_at, b.created_at)::date,
    CASE WHEN k % 6 <> 5 THEN 'DR-' || lpad(k::text, 7, '0') END,
    CASE WHEN k % 6 <> 5 THEN ($2::text[])[1 + k % 6] END,
    CASE WHEN k % 6 <> 5 THEN (ARRAY['fraud', 'product_not_received', 'duplicate', 'cancelled'])[1 + k % 4] END,
    CASE WHEN k % 6 <> 5 THEN (seen + interval '14 days')::date END,
    CASE WHEN k % 6 <> 5 THEN (seen + interval '1 day')::date END,
    seen, seen
  FROM (
    SELECT b.*, row_number() OVER (ORDER BY b.booked_at, b.id) AS k,
      least(b.booked_at + make_interval(days => 20 + abs(hashtext(b.id::text)) % 41), now() - interval '1 hour') AS seen
    FROM bookings b
    WHERE b.booked_at >= $1::timestamptz AND b.status IN ('CONFIRMED', 'CANCELLED', 'REFUNDED')
      AND abs(hashtext(b.id::text || 'chargeback')) % 400 = 0
  ) b
  JOIN operator_payment_accounts a ON a.operator_id = b.operator_id`

const unmatchedSql = `
  INSERT INTO chargebacks (source_key, merchant_id, order_id, amount_minor, currency, fee_minor, transaction_date,
    first_seen_at)
  SELECT 'charge:bench-merchant-001:unmatched:' || g, 'bench-merchant-001', 'unknown-order-' || g, 30000, 'NOK', 15000,
    ($1::date + g * 7), ($1::date + g * 7 + 20)::timestamp AT TIME ZONE 'UTC'
  FROM generate_series(1, 50) g`

const monthOf = (d: Date) => d.toISOString().slice(0, 7)
const monthsBack = (from: Date, n: number) => {
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() - n, 1))
  return d
}

/** Closes `months` oldest first with the service's own issuing code (the commission-close job's). */
const issueInvoices = (url: string, months: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const issuing = yield* InvoiceIssuing
    let documents = 0
    for (const month of months) {
      const t0 = Date.now()
      const summary = yield* issuing.closeMonth(month)
      documents += summary.documents
      log(
        `commission close ${month}: ${summary.documents} documents for ${summary.entities} accounts, ` +
          `${summary.failed} failed: ${((Date.now() - t0) / 1000).toFixed(1)} s`
      )
      if (summary.failed > 0) return yield* Effect.dieMessage(`commission close of ${month} failed`)
    }
    return documents
  }).pipe(Effect.provide(InvoiceIssuing.Default.pipe(Layer.provideMerge(layerFromUrl(url, 2)))))

export const ensureFinanceDataset = (url: string, operatorIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const found = yield* Effect.promise(() => existing(url))
    if (found) {
      log(`reusing the finance dataset generated ${found.generatedAt}`)
      return { ...found, reused: true }
    }
    const started = Date.now()
    const now = new Date()
    const sinceDate = monthsBack(now, FINANCE_MONTHS)
    const since = sinceDate.toISOString().slice(0, 10)
    const months = Array.from({ length: FINANCE_MONTHS }, (_, i) => monthOf(monthsBack(now, FINANCE_MONTHS - i)))
    const key = yield* Effect.promise(() =>
      withClient(url, async (client) => {
        const step = async (what: string, text: string, values: Array<unknown> = []) => {
          const t0 = Date.now()
          const result = await client.query(text, values)
          log(`${what} (${result.rowCount ?? 0} rows): ${((Date.now() - t0) / 1000).toFixed(1)} s`)
        }
        await client.query("SET work_mem = '256MB'")
        await client.query("SET synchronous_commit = off")
        await client.query("BEGIN")
        try {
          // A rerun after an interrupted one starts from nothing (none of it is the dataset's own).
          await client.query(`DELETE FROM commission_invoice_files; DELETE FROM commission_invoice_entries;
            DELETE FROM commission_invoice_lines; DELETE FROM commission_invoices; DELETE FROM commission_closes;
            UPDATE invoice_series SET last_number = 0; DELETE FROM chargebacks; DELETE FROM settlement_payouts;
            DELETE FROM pay_later_attempts; DELETE FROM pay_later_charges; DELETE FROM commission_statements;
            DELETE FROM commission_statement_counters; DELETE FROM commission_entries;
            DELETE FROM operator_payment_accounts`)
          await step("pay-later charges (migration 0031's backfill)", payLaterSql, [sinceDate.toISOString()])
          await step("pay-later attempts and failures", payLaterAttemptsSql)
          await step("commission sales (migration 0032's backfill)", commissionSql[0]!, [sinceDate.toISOString()])
          await step("commission cancellations", commissionSql[1]!, [sinceDate.toISOString()])
          await step("payout accounts", accountsSql, [operatorIds])
          await step("payouts", payoutsSql, [since])
          await step("payout adjustments", adjustmentsSql)
          await step("chargebacks", chargebacksSql, [since, DISPUTE_STATES])
          await step("unmatched chargebacks", unmatchedSql, [since])
          const keyOperators = FINANCE_KEY_OPERATORS.map((n) => operatorIds[n - 1]!)
          const owner = (await client.query<{ user_id: string }>(
            "SELECT user_id FROM memberships WHERE operator_id = $1 AND role = 'owner'",
            [operatorIds[0]]
          )).rows[0]!.user_id
          await client.query(
            `INSERT INTO memberships (operator_id, user_id, role)
             SELECT id, $1, 'admin' FROM unnest($2::uuid[]) AS id ON CONFLICT DO NOTHING`,
            [owner, keyOperators]
          )
          const key = await createKey(client, owner, "bench: finance, 10 operators", keyOperators, ["finance:read"])
          await client.query("COMMIT")
          return key
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined)
          throw error
        }
      })
    )
    yield* Effect.promise(() =>
      withClient(url, (c) =>
        c.query("VACUUM (ANALYZE) pay_later_charges, commission_entries, settlement_payouts, chargebacks"))
    )
    const documents = yield* issueInvoices(url, months)
    log(`${documents} commission documents issued`)
    const info = yield* Effect.promise(() =>
      withClient(url, async (c) => {
        await c.query("VACUUM (ANALYZE)")
        const { rows: [counts] } = await c.query<Record<string, string>>(`
          SELECT (SELECT count(*) FROM pay_later_charges) AS pay_later_charges,
            (SELECT count(*) FROM commission_entries) AS commission_entries,
            (SELECT count(*) FROM commission_statements) AS statements,
            (SELECT count(DISTINCT merchant_id) FROM operator_payment_accounts) AS payout_accounts,
            (SELECT count(*) FROM settlement_payouts) AS payouts,
            (SELECT count(*) FROM settlement_adjustments) AS adjustments,
            (SELECT count(*) FROM chargebacks) AS chargebacks,
            (SELECT count(*) FROM chargebacks WHERE booking_id IS NULL) AS unmatched_chargebacks,
            (SELECT count(*) FROM commission_invoices WHERE type = 'invoice') AS invoices,
            (SELECT count(*) FROM commission_invoices WHERE type = 'credit_note') AS credit_notes,
            (SELECT count(*) FROM commission_invoice_lines) AS invoice_lines`)
        const info: FinanceDatasetInfo = {
          version: FINANCE_GENERATOR_VERSION,
          generatedAt: new Date().toISOString(),
          since,
          months,
          key,
          counts: Object.fromEntries(Object.entries(counts!).map(([k, v]) => [k, Number(v)])),
          seconds: Math.round((Date.now() - started) / 100) / 10
        }
        await c.query(
          `INSERT INTO bench_meta (name, value) VALUES ('finance', $1)
           ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
          [JSON.stringify(info)]
        )
        return info
      })
    )
    log(`finance dataset ready in ${info.seconds} s: ${JSON.stringify(info.counts)}`)
    return { ...info, reused: false }
  })

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const settings = readSettings()
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const server = yield* benchServer(settings)
      const dataset = yield* ensureDataset(server.adminUrl, settings)
      yield* migrate(dataset.url)
      const finance = yield* ensureFinanceDataset(dataset.url, dataset.operatorIds)
      console.log(JSON.stringify({ ...finance, key: finance.key.id }, null, 2))
    }))
  ).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
