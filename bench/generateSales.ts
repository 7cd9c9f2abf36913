/**
 * The sales summary's dataset (`npm run bench:sales`, issue 13), added to the bookings dataset of
 * bench/generate.ts (1,000,000 own bookings of 100 operators over the two years before it was
 * generated), in SQL, in one transaction, with a fixed seed:
 *
 * - Booking-system accounts shared as in real life: operators grouped in turn into accounts of 1, 2
 *   and 3 operators (operator #1 keeps its own account, the mirror's; 50 accounts for 100 operators).
 * - 2,000,000 lines in `sales_ledger_lines` created over the last 400 days, every day (about 1.33
 *   lines a booking; a booking's lines share its creation time, operator and channel): channels Viator,
 *   GetYourGuide, Expedia (OTA, 30% of their lines in EUR for Norwegian operators), direct sales,
 *   two resellers, and the service's own channel (10%: left out by the rollup, their references are
 *   our bookings' confirmation codes); 8% CANCELLED, 4% RESERVED; each line belongs to one operator of
 *   its account (an operator's tour), so operators sharing an account each have their own lines.
 * - `sales_ledger_accounts` complete for every account: covered from 400 days back until now.
 * - `exchange_rates` of EUR and USD for every banking day (Monday to Friday) of the last 420 days.
 * - A key with `finance:read` over 10 operators (#1-#5, Norwegian, NOK; #71-#75, Portuguese, EUR),
 *   created by operator #1's owner, who administers them.
 * - The rollups, built once through the real service (SalesRollups.refresh, the minute job's code).
 *
 * The `bench_meta` row `sales` records it; a later run reuses it. `ledger_changed_at` is the line's
 * creation (history), so the rollup job's later runs do not see the whole ledger as changed.
 */
import { Effect, Layer } from "effect"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { SalesRollups } from "../src/sales/SalesRollups.js"
import { type BenchKey, createKey } from "./generate.js"

export const SALES_GENERATOR_VERSION = 2
export const LEDGER_LINES = 2_000_000
export const LEDGER_DAYS = 400
const RATE_DAYS = 420
/** Operator numbers of the finance key: five Norwegian (NOK) and five Portuguese (EUR) operators. */
export const KEY_OPERATORS = [1, 2, 3, 4, 5, 71, 72, 73, 74, 75]

export interface SalesDatasetInfo {
  readonly version: number
  readonly lines: number
  readonly accounts: number
  readonly generatedAt: string
  readonly generationSeconds: number
  readonly rollupSeconds: number
  readonly rollupGroups: { readonly own: number; readonly channels: number }
  readonly key: BenchKey
  readonly counts: Record<string, number>
}

const log = (line: string) => console.log(`[generate-sales] ${line}`)

/** Accounts of 1, 2, 3, 1, 2, 3 … operators in operator order (operator #1 alone in the mirror's account). */
const accountsSql = (operators: number) => `
  CREATE TEMP TABLE bench_sales_ops ON COMMIT DROP AS
  SELECT o.id, o.n, o.cur, o.account_n FROM (
    SELECT id, row_number() OVER (ORDER BY created_at, id)::int AS n,
      CASE WHEN timezone = 'Europe/Lisbon' THEN 'EUR' ELSE 'NOK' END AS cur, NULL::int AS account_n
    FROM operators
  ) o;
  -- Group boundaries: sizes 1, 2, 3 repeating (blocks of 6 operators hold accounts 3k+1, 3k+2, 3k+3).
  UPDATE bench_sales_ops SET account_n = ((n - 1) / 6) * 3 + CASE WHEN (n - 1) % 6 = 0 THEN 1
    WHEN (n - 1) % 6 < 3 THEN 2 ELSE 3 END;

  CREATE TEMP TABLE bench_sales_accounts ON COMMIT DROP AS
  SELECT a.account_n,
    coalesce((SELECT o.booking_system_account_id FROM operators o JOIN bench_sales_ops s ON s.id = o.id
      WHERE s.account_n = a.account_n AND o.booking_system_account_id IS NOT NULL LIMIT 1), gen_random_uuid()) AS id,
    (SELECT count(*) FROM bench_sales_ops s WHERE s.account_n = a.account_n)::int AS size
  FROM (SELECT DISTINCT account_n FROM bench_sales_ops) a;

  INSERT INTO booking_system_accounts (id, kind, name, base_url, access_key, secret_key, created_at)
  SELECT id, 'bokun', 'bench: sales account ' || account_n, 'http://127.0.0.1:9', 'bench-access', 'bench-secret',
    now() - interval '2 years'
  FROM bench_sales_accounts
  ON CONFLICT (id) DO NOTHING;

  UPDATE operators o SET booking_system_account_id = a.id
  FROM bench_sales_ops s JOIN bench_sales_accounts a ON a.account_n = s.account_n
  WHERE o.id = s.id AND o.booking_system_account_id IS DISTINCT FROM a.id;
  -- ${operators} operators
`

/**
 * The ledger lines: bookings (random creation over the last LEDGER_DAYS days, account, channel),
 * each with 1 or 2 lines, cut to exactly `lines`. The line's operator is one of its account's, its
 * tour one of that operator's four.
 */
const linesSql = (lines: number) => `
  CREATE TEMP TABLE bench_sales_members ON COMMIT DROP AS
  SELECT s.id, s.n, s.cur, s.account_n, (row_number() OVER (PARTITION BY s.account_n ORDER BY s.n) - 1)::int AS idx,
    a.id AS account_id, a.size
  FROM bench_sales_ops s JOIN bench_sales_accounts a ON a.account_n = s.account_n;
  CREATE TEMP TABLE bench_sales_tours ON COMMIT DROP AS
  SELECT t.operator_id, (row_number() OVER (PARTITION BY t.operator_id ORDER BY t.created_at, t.id) - 1)::int AS k, t.id
  FROM tours t;
  ANALYZE bench_sales_members;
  ANALYZE bench_sales_tours;

  INSERT INTO sales_ledger_lines (account_id, line_id, booking_id, external_reference, operator_id, tour_id, product_id,
    status, channel_class, channel_title, participants, total_minor, currency, created_at, changed_at, synced_at)
  SELECT * FROM (
  SELECT m.account_id, 'L' || b.i || '-' || l.k, 'B' || b.i,
    CASE b.channel_class
      WHEN 'service' THEN 'BK' || lpad((1 + floor(b.r_ref * 1000000))::int::text, 8, '0')
      WHEN 'ota' THEN upper(left(b.channel_title, 3)) || '-' || (1000000 + b.i)
    END,
    m.id, t.id, 'bench-product-' || m.n || '-' || t.k,
    CASE WHEN b.r_status < 0.08 THEN 'CANCELLED' WHEN b.r_status < 0.12 THEN 'RESERVED' ELSE 'CONFIRMED' END,
    b.channel_class, b.channel_title,
    1 + floor(power(b.r_pax, 2) * 6)::int,
    CASE WHEN c.line_cur = 'EUR' THEN 2500 + floor(b.r_price * 12)::int * 1000
      ELSE 39900 + floor(b.r_price * 12)::int * 10000 END * (1 + floor(power(b.r_pax, 2) * 6)::int),
    c.line_cur, b.created AS created_at, b.created AS changed_at, now() AS synced_at
  FROM (
    SELECT g.*,
      now() - g.r_created * interval '${LEDGER_DAYS} days' AS created,
      CASE WHEN g.r_channel < 0.55 THEN 'ota' WHEN g.r_channel < 0.75 THEN 'direct' WHEN g.r_channel < 0.90 THEN 'reseller'
           ELSE 'service' END AS channel_class,
      CASE WHEN g.r_channel < 0.25 THEN 'Viator' WHEN g.r_channel < 0.40 THEN 'GetYourGuide'
           WHEN g.r_channel < 0.55 THEN 'Expedia' WHEN g.r_channel < 0.70 THEN 'Direct sales'
           WHEN g.r_channel < 0.75 THEN NULL WHEN g.r_channel < 0.84 THEN 'Hotel Continental desk'
           WHEN g.r_channel < 0.90 THEN 'Fjord Pass Reseller' ELSE 'Panion' END AS channel_title,
      1 + floor(g.r_account * (SELECT max(account_n) FROM bench_sales_accounts))::int AS account_n
    FROM (
      SELECT i, random() AS r_created, random() AS r_account, random() AS r_op, random() AS r_channel,
        random() AS r_status, random() AS r_pax, random() AS r_price, random() AS r_ref, random() AS r_lines,
        random() AS r_tour, random() AS r_eur
      FROM generate_series(1, ${Math.ceil(lines / 1.3)}) AS i
    ) g
  ) b
  CROSS JOIN LATERAL generate_series(1, CASE WHEN b.r_lines < 1.0 / 3 THEN 2 ELSE 1 END) AS l(k)
  JOIN bench_sales_accounts a ON a.account_n = b.account_n
  JOIN bench_sales_members m ON m.account_n = b.account_n AND m.idx = floor(b.r_op * a.size)::int
  JOIN bench_sales_tours t ON t.operator_id = m.id AND t.k = floor(b.r_tour * 4)::int
  CROSS JOIN LATERAL (
    SELECT CASE WHEN m.cur = 'NOK' AND b.channel_class = 'ota' AND b.r_eur < 0.3 THEN 'EUR' ELSE m.cur END AS line_cur
  ) c
  -- The cut falls on whole random bookings (generation order), whatever their day; stored oldest first.
  ORDER BY b.i, l.k
  LIMIT ${lines}
  ) x ORDER BY x.created_at
`

const ratesSql = `
  INSERT INTO exchange_rates (currency, day, nok_per_unit, source, fetched_at)
  SELECT c.currency, d::date,
    round((c.base + c.swing * sin(extract(epoch FROM d) / 86400 / 23.0) + 0.05 * cos(extract(epoch FROM d) / 86400 / 3.0))::numeric, 4),
    'norges_bank', d + interval '16 hours'
  FROM generate_series((now() AT TIME ZONE 'UTC')::date - ${RATE_DAYS}, (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS d
  CROSS JOIN (VALUES ('EUR', 11.55, 0.25), ('USD', 10.70, 0.35)) AS c(currency, base, swing)
  WHERE extract(isodow FROM d) < 6
  ON CONFLICT (currency, day) DO NOTHING
`

const ledgerAccountsSql = `
  INSERT INTO sales_ledger_accounts (account_id, covered_from, covered_until, last_attempt_at, last_outcome)
  SELECT id, (now() AT TIME ZONE 'UTC')::date - ${LEDGER_DAYS}, now(), now(), 'ok' FROM bench_sales_accounts
  ON CONFLICT (account_id) DO UPDATE SET covered_from = excluded.covered_from, covered_until = excluded.covered_until,
    last_attempt_at = excluded.last_attempt_at, last_outcome = 'ok', last_error = NULL
`

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** The `sales` marker, when the database holds a complete sales dataset of this version. */
const existing = (url: string) =>
  withClient(url, async (c) => {
    const meta = await c.query<{ value: SalesDatasetInfo }>("SELECT value FROM bench_meta WHERE name = 'sales'")
    const info = meta.rows[0]?.value
    if (!info || info.version !== SALES_GENERATOR_VERSION || info.lines !== LEDGER_LINES) return undefined
    const key = await c.query("SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [info.key.id])
    return key.rowCount === 1 ? info : undefined
  })

/** Builds the rollups through the service's own SalesRollups (a full run on an empty state). */
export const refreshRollups = (url: string) =>
  Effect.gen(function*() {
    const rollups = yield* SalesRollups
    const t0 = Date.now()
    const result = yield* rollups.refresh()
    return { ...result, seconds: (Date.now() - t0) / 1000 }
  }).pipe(Effect.provide(SalesRollups.Default.pipe(Layer.provide(layerFromUrl(url, 2)))), Effect.scoped)

/**
 * Makes sure the bookings database at `url` (migrated) holds the sales dataset; answers its marker.
 */
export const ensureSalesDataset = (url: string) =>
  Effect.gen(function*() {
    const found = yield* Effect.promise(() => existing(url))
    if (found) {
      log(`reusing the sales dataset generated ${found.generatedAt}`)
      return { ...found, reused: true }
    }
    const started = Date.now()
    const generated = yield* Effect.promise(() =>
      withClient(url, async (client) => {
        const step = async (what: string, text: string) => {
          const t0 = Date.now()
          const result = await client.query(text)
          const rows = Array.isArray(result) ? "" : result.rowCount !== null ? ` (${result.rowCount} rows)` : ""
          log(`${what}${rows}: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
        }
        await client.query("SET maintenance_work_mem = '512MB'")
        await client.query("SET work_mem = '256MB'")
        await client.query("SET synchronous_commit = off")
        await client.query("BEGIN")
        try {
          await client.query("SELECT setseed(0.1313)")
          await client.query(
            "DELETE FROM sales_own_daily; DELETE FROM sales_channel_daily; DELETE FROM sales_own_day_totals; " +
              "DELETE FROM sales_channel_day_totals; DELETE FROM sales_rollup_state"
          )
          await client.query("TRUNCATE sales_ledger_lines, sales_ledger_accounts")
          const operators = Number(
            (await client.query<{ n: string }>("SELECT count(*) AS n FROM operators")).rows[0]!.n
          )
          await step("booking-system accounts of 1-3 operators", accountsSql(operators))
          const indexes = (await client.query<{ name: string; def: string }>(`
            SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            WHERE x.indrelid = 'sales_ledger_lines'::regclass
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`)).rows
          for (const index of indexes) await client.query(`DROP INDEX ${pg.escapeIdentifier(index.name)}`)
          await step(`${LEDGER_LINES} ledger lines`, linesSql(LEDGER_LINES))
          for (const index of indexes) await step(`index ${index.name}`, index.def)
          await step("ledger accounts", ledgerAccountsSql)
          await step("exchange rates", ratesSql)
          // Operator #1's owner administers the key's operators (#2 and #3 already).
          const owner = (await client.query<{ user_id: string }>(
            `SELECT m.user_id FROM memberships m JOIN bench_sales_ops s ON s.id = m.operator_id
             WHERE s.n = 1 AND m.role = 'owner'`
          )).rows[0]!.user_id
          const keyOperators = (await client.query<{ id: string }>(
            "SELECT id FROM bench_sales_ops WHERE n = ANY($1::int[]) ORDER BY n",
            [KEY_OPERATORS]
          )).rows.map((r) => r.id)
          await client.query(
            `INSERT INTO memberships (operator_id, user_id, role)
             SELECT id, $1, 'admin' FROM unnest($2::uuid[]) AS id ON CONFLICT DO NOTHING`,
            [owner, keyOperators]
          )
          const key = await createKey(client, owner, "bench: sales, 10 operators", keyOperators, ["finance:read"])
          const accounts = Number(
            (await client.query<{ n: string }>("SELECT count(*) AS n FROM bench_sales_accounts")).rows[0]!.n
          )
          const generatedAt = (await client.query<{ now: Date }>("SELECT now()")).rows[0]!.now.toISOString()
          await client.query("COMMIT")
          await step(
            "vacuum analyze",
            "VACUUM (ANALYZE) sales_ledger_lines, sales_ledger_accounts, exchange_rates, operators"
          )
          return { key, accounts, generatedAt }
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined)
          throw error
        }
      })
    )
    log("building the rollups through SalesRollups.refresh (a full run)")
    const rollup = yield* refreshRollups(url)
    log(
      `rollups built: ${rollup.own.groups} own groups, ${rollup.channels.groups} channel groups in ${rollup.seconds} s`
    )
    const info = yield* Effect.promise(() =>
      withClient(url, async (c) => {
        await c.query(
          "VACUUM (ANALYZE) sales_own_daily, sales_channel_daily, sales_own_day_totals, sales_channel_day_totals"
        )
        const count = async (table: string) =>
          Number((await c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n)
        const counts: Record<string, number> = {}
        for (
          const table of [
            "bookings",
            "sales_ledger_lines",
            "sales_ledger_accounts",
            "exchange_rates",
            "sales_own_daily",
            "sales_channel_daily",
            "sales_own_day_totals",
            "sales_channel_day_totals"
          ]
        ) counts[table] = await count(table)
        const value: SalesDatasetInfo = {
          version: SALES_GENERATOR_VERSION,
          lines: LEDGER_LINES,
          accounts: generated.accounts,
          generatedAt: generated.generatedAt,
          generationSeconds: Math.round((Date.now() - started) / 100) / 10,
          rollupSeconds: rollup.seconds,
          rollupGroups: { own: rollup.own.groups, channels: rollup.channels.groups },
          key: generated.key,
          counts
        }
        await c.query(
          `INSERT INTO bench_meta (name, value) VALUES ('sales', $1)
           ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
          [JSON.stringify(value)]
        )
        return value
      })
    )
    log(`sales dataset ready in ${info.generationSeconds} s: ${JSON.stringify(info.counts)}`)
    return { ...info, reused: false }
  })
