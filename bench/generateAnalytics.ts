/**
 * The dataset of `npm run bench:analytics` (bench/analytics.ts): a migrated database with the tour
 * catalogue of bench/generateTours.ts (100 sites, each owned by its operator with two partner
 * operators; 5 tours per owner, 3 per partner: 1,100 tours) and a year and more (400 days before
 * today, UTC) of the analytics rollups written in SQL straight into the daily tables, as the rollup
 * job leaves them (deterministic: `setseed`):
 *
 * - `analytics_site_daily`: per site and day, visitors by the site's size (site #1 ~4,000 a day,
 *   #2–#10 ~1,500, the other 90 ~300) times a weekly and a seasonal rhythm; ~2.5 pageviews a visitor.
 * - `analytics_source_daily`: the 10 dimensions with label counts by size (the big site: channel 8,
 *   referrer 30, utm_source 12, utm_medium 5, utm_campaign 15, country 35, device 3, browser 8, os 6,
 *   path 60; 60% of that on the middle sites, 30% on the small ones), visitors falling off by rank.
 * - `analytics_tour_daily`: the funnel of every tour on its own sites (owner's and partners'), and of
 *   about 1 in 33 of the tours a site resells (15 a site), on ~90% of days.
 * - `sales_own_daily` (checkout, with site_id) for those tours on the days they had checkout attempts;
 *   `sales_channel_daily` for the big site's owner (4 channels, NOK and EUR), its booking-system
 *   account covered by the ledger; `exchange_rates` for EUR and USD on every day.
 * - The rollups' event volume (pageviews + tour funnel events) is counted and kept in
 *   `bench_analytics_meta` with the keys: a secret key with `analytics:read` for site #1's owner and
 *   publishable keys of site #1 (for the collection).
 * The database is kept and reused (BENCH_REGENERATE=1 rebuilds it).
 */
import { Effect } from "effect"
import pg from "pg"
import { createDatabase } from "../src/db/embedded.js"
import { createKey } from "./generate.js"
import { createPublishableKeys, generateCatalogue, migrate } from "./generateTours.js"

export interface AnalyticsDataset {
  readonly key: { readonly id: string; readonly token: string; readonly operatorIds: ReadonlyArray<string> }
  readonly site: { readonly id: string; readonly domain: string }
  readonly publishableKeys: ReadonlyArray<string>
  readonly counts: Readonly<Record<string, number>>
  /** The events the rollup rows stand for (pageviews + funnel steps), all days and the last 365. */
  readonly events: { readonly all: number; readonly lastYear: number }
  readonly generationSeconds: number
}

const log = (line: string) => console.log(`[generate-analytics] ${line}`)

const DAYS = 400
const PUBLISHABLE_KEYS = 20

/** Site size class from its number n (1 big, 2..10 middle, rest small) and a day's rhythm. */
const ROLLUPS_SQL = `
SELECT setseed(0.1414);

CREATE TEMP TABLE g_site AS
SELECT s.id, s.owner_operator_id, n,
  CASE WHEN n = 1 THEN 4000 WHEN n <= 10 THEN 1500 ELSE 300 END AS base,
  CASE WHEN n = 1 THEN 1.0 WHEN n <= 10 THEN 0.6 ELSE 0.3 END AS labels
FROM (SELECT id, owner_operator_id, row_number() OVER (ORDER BY substring(name FROM '[0-9]+$')::int) AS n FROM sites) s;

CREATE TEMP TABLE g_day AS
SELECT current_date - d AS day,
  (1 + 0.45 * sin(2 * pi() * (extract(doy FROM current_date - d) - 100) / 365))
    * (CASE extract(isodow FROM current_date - d) WHEN 6 THEN 1.25 WHEN 7 THEN 1.3 WHEN 1 THEN 0.85 ELSE 1 END) AS f
FROM generate_series(0, ${DAYS}) d;

CREATE TEMP TABLE g_site_day AS
SELECT s.id AS site_id, d.day, s.n, s.labels,
  greatest(1, round(s.base * d.f * (0.85 + 0.3 * random())))::int AS visitors
FROM g_site s, g_day d;

INSERT INTO analytics_site_daily (site_id, day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds)
SELECT site_id, day, visitors, (visitors * 0.7)::int, (visitors * 1.15)::int, (visitors * 2.5)::int,
  (visitors * 0.45)::int, (visitors * 1.15 * 140)::int8
FROM g_site_day;

CREATE TEMP TABLE g_dim (dimension text, max_labels int, names text[]);
INSERT INTO g_dim VALUES
  ('channel', 8, ARRAY['Direct', 'Organic Search', 'Organic Social', 'Referral', 'Paid Search', 'Email', 'Paid Social', 'Display']),
  ('referrer', 30, NULL), ('utm_source', 12, NULL), ('utm_medium', 5, ARRAY['(none)', 'email', 'cpc', 'social', 'referral']),
  ('utm_campaign', 15, NULL), ('country', 35, ARRAY['NO', 'DE', 'US', 'GB', 'SE', 'DK', 'NL', 'FR', 'ES', 'IT', 'PL', 'CH', 'AT', 'BE', 'FI', 'PT', 'CN',
    'JP', 'KR', 'AU', 'CA', 'IE', 'CZ', 'IS', 'IN', 'BR', 'MX', 'SG', 'IL', 'AE', 'TW', 'HK', 'NZ', 'EE', 'LT']), ('device', 3, ARRAY['mobile', 'desktop', 'tablet']),
  ('browser', 8, ARRAY['Chrome', 'Safari', 'Firefox', 'Microsoft Edge', 'Samsung Internet', 'Opera', 'Chrome Mobile', 'Safari Mobile']),
  ('os', 6, ARRAY['iOS', 'Android', 'Windows', 'macOS', 'Linux', 'ChromeOS']), ('path', 60, NULL);

INSERT INTO analytics_source_daily (site_id, day, dimension, label, visitors, conversions, revenue_eur_minor)
SELECT sd.site_id, sd.day, g.dimension,
  coalesce(g.names[k], CASE g.dimension WHEN 'referrer' THEN 'ref' || k || '.example.com' WHEN 'utm_source' THEN 'source-' || k
    WHEN 'utm_campaign' THEN 'campaign-' || k ELSE '/tours/page-' || k END),
  v, (v * 0.012)::int, (v * 0.012)::int * 9500
FROM g_site_day sd CROSS JOIN g_dim g
CROSS JOIN LATERAL generate_series(1, greatest(1, ceil(g.max_labels * sd.labels)::int)) k
CROSS JOIN LATERAL (SELECT greatest(1, round(sd.visitors * 0.6 / k * (0.7 + 0.6 * random())))::int AS v) x
WHERE random() < 0.93 OR k <= 3;

-- The tours with traffic on a site: its own and its partners' (sold_by operator), 1 in 33 of the resold.
CREATE TEMP TABLE g_site_tour AS
SELECT st.site_id, st.tour_id, t.operator_id, s.n,
  CASE WHEN st.sold_by = 'operator' THEN 1.0 ELSE 0.4 END * s.base / 40.0 AS views
FROM site_tours st JOIN tours t ON t.id = st.tour_id JOIN g_site s ON s.id = st.site_id
WHERE st.sold_by = 'operator' OR abs(hashtext(st.site_id::text || st.tour_id::text)) % 33 = 0;

INSERT INTO analytics_tour_daily (site_id, tour_id, day, views, availability_checks, checkout_opens, checkout_attempts)
SELECT site_id, tour_id, day, v, (v * 0.45)::int, (v * 0.12)::int, (v * 0.05)::int
FROM (
  SELECT st.site_id, st.tour_id, d.day, greatest(1, round(st.views * d.f * (0.5 + random())))::int AS v
  FROM g_site_tour st, g_day d WHERE random() < 0.9
) x;

INSERT INTO sales_own_daily (operator_id, day, source, site_id, tour_id, currency, bookings, participants, revenue_minor)
SELECT t.operator_id, d.day, 'checkout', d.site_id, d.tour_id, 'NOK', b, b * 2, b * (89000 + abs(hashtext(t.id::text)) % 60000)
FROM analytics_tour_daily d JOIN tours t ON t.id = d.tour_id
CROSS JOIN LATERAL (SELECT (d.checkout_attempts * 0.6)::int AS b) x
WHERE x.b > 0;

-- Other channels of site #1's owner, through a booking-system account the ledger covers.
INSERT INTO booking_system_accounts (id, kind, name, base_url, access_key, secret_key)
SELECT '00000000-0000-4000-8000-00000000a001', 'bokun', 'Bench account', 'https://bokun.example', 'x', 'x';
UPDATE operators SET booking_system_account_id = '00000000-0000-4000-8000-00000000a001'
WHERE id = (SELECT owner_operator_id FROM g_site WHERE n = 1);
INSERT INTO sales_ledger_accounts (account_id, covered_from, covered_until, last_attempt_at, last_outcome)
VALUES ('00000000-0000-4000-8000-00000000a001', current_date - ${DAYS + 20}, now() + interval '10 years', now(), 'ok');

INSERT INTO sales_channel_daily (operator_id, day, account_id, tour_id, channel_class, channel_label, currency, bookings,
  participants, revenue_minor)
SELECT t.operator_id, d.day, '00000000-0000-4000-8000-00000000a001', t.id, c.class, c.label, c.currency, b, b * 2, b * c.price
FROM tours t JOIN g_site s ON s.owner_operator_id = t.operator_id AND s.n = 1
CROSS JOIN g_day d
CROSS JOIN (VALUES ('ota', 'Viator', 'EUR', 8900), ('ota', 'GetYourGuide', 'EUR', 8500), ('ota', 'Expedia', 'NOK', 99000),
  ('direct', 'Direct', 'NOK', 95000)) c(class, label, currency, price)
CROSS JOIN LATERAL (SELECT floor(random() * 4 * d.f)::int AS b) x
WHERE x.b > 0;

INSERT INTO exchange_rates (currency, day, nok_per_unit, source)
SELECT c, d.day, CASE c WHEN 'EUR' THEN 11.5 + 0.3 * sin(extract(doy FROM d.day) / 20.0) ELSE 10.6 END, 'norges_bank'
FROM (SELECT current_date - d AS day FROM generate_series(-2, ${DAYS + 20}) d) d, unnest(ARRAY['EUR', 'USD']) c
ON CONFLICT DO NOTHING;
`

const TABLES = [
  "analytics_site_daily",
  "analytics_source_daily",
  "analytics_tour_daily",
  "sales_own_daily",
  "sales_channel_daily",
  "exchange_rates",
  "tours",
  "sites"
]

const readMeta = async (url: string): Promise<AnalyticsDataset | undefined> => {
  const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
  try {
    await client.connect()
    const { rows } = await client.query<{ info: AnalyticsDataset }>("SELECT info FROM bench_analytics_meta")
    return rows[0]?.info
  } catch {
    return undefined
  } finally {
    await client.end().catch(() => {})
  }
}

/** The dataset in database `name` on the bench's server: reused when complete, otherwise built afresh. */
export const ensureAnalyticsDataset = (adminUrl: string, name: string, regenerate: boolean) =>
  Effect.gen(function*() {
    const databaseUrl = new URL(adminUrl)
    databaseUrl.pathname = `/${name}`
    const url = databaseUrl.toString()
    if (!regenerate) {
      const existing = yield* Effect.promise(() => readMeta(url))
      if (existing) {
        log(`reusing ${name} (BENCH_REGENERATE=1 rebuilds it)`)
        return { url, dataset: existing }
      }
    }
    const started = Date.now()
    log(`creating ${name} afresh`)
    yield* createDatabase(adminUrl, name)
    yield* migrate(url)
    const catalogue = yield* generateCatalogue(url, { sites: 100, toursPerOperator: 5 })
    const site = catalogue.sites[0]!
    const publishableKeys = yield* createPublishableKeys(url, site, PUBLISHABLE_KEYS)
    const dataset = yield* Effect.promise(async (): Promise<AnalyticsDataset> => {
      const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
      await client.connect()
      try {
        const t0 = Date.now()
        await client.query("BEGIN")
        await client.query(ROLLUPS_SQL)
        await client.query("COMMIT")
        log(`rollup rows written in ${Math.round((Date.now() - t0) / 1000)} s`)
        await client.query("VACUUM ANALYZE")
        const key = await createKey(client, site.ownerUserId, "Bench analytics (site #1 owner)", [
          site.ownerOperatorId
        ], ["analytics:read"])
        const counts: Record<string, number> = {}
        for (const t of TABLES) {
          counts[t] = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0]!.n
        }
        const events = (await client.query<{ all: string; year: string }>(`
          SELECT sum(n) AS all, sum(n) FILTER (WHERE day > current_date - 365) AS year FROM (
            SELECT day, pageviews::int8 AS n FROM analytics_site_daily
            UNION ALL SELECT day, (views + availability_checks + checkout_opens + checkout_attempts)::int8
            FROM analytics_tour_daily) x`)).rows[0]!
        const info: AnalyticsDataset = {
          key: { id: key.id, token: key.token, operatorIds: key.operatorIds },
          site: { id: site.id, domain: site.domain },
          publishableKeys: publishableKeys.map((k) => k.token),
          counts,
          events: { all: Number(events.all), lastYear: Number(events.year) },
          generationSeconds: Math.round((Date.now() - started) / 1000)
        }
        await client.query("CREATE TABLE bench_analytics_meta (info jsonb NOT NULL)")
        await client.query("INSERT INTO bench_analytics_meta (info) VALUES ($1)", [JSON.stringify(info)])
        return info
      } finally {
        await client.end()
      }
    })
    log(
      `done in ${dataset.generationSeconds} s: ${JSON.stringify(dataset.counts)}; events ${
        JSON.stringify(dataset.events)
      }`
    )
    return { url, dataset }
  })
