/**
 * The tour catalogue of `npm run bench:tours` (bench/tours.ts), generated in SQL on a migrated,
 * empty database (deterministic: `setseed` at the start of the one session).
 *
 * - BENCH_TOURS_SITES sites (default 4), each owned by its own operator (with an owner user), and two
 *   partner operators per site (site_operators) selling their own tours there.
 * - Tours: BENCH_TOURS_PER_OPERATOR per operator (default 250 for a site owner, 60% of it for a
 *   partner), about 90% published (the rest draft or archived), created over the last two years;
 *   English content on the tour: excerpt, 1.5-3 KB of description HTML (paragraphs, a list, links,
 *   emphasis: cleaned on every read), included/excluded HTML, inclusions, exclusions, highlights,
 *   know-before lists, meeting point, cancellation, difficulty, minimum age, departure times,
 *   guide languages, rating.
 * - Per tour: 4-12 photos, 2-3 pricing categories (Adult default, Child, sometimes Senior),
 *   1-3 rates, 0-2 linked products (other tours), a season-cache row for 80% of the tours.
 * - Translations into nb, de, fr, es and it (each for 60-90% of the tours), with the categories'
 *   and rates' titles translated.
 * - Each site sells its owner's tours, its partners' tours, and 40 tours of each other site's owner
 *   as a reseller (`sold_by = 'site_owner'`): those tours are on several sites (DISTINCT ON works).
 *
 * Publishable keys are made by the runner (`createPublishableKeys`), as many as it needs.
 *
 * Standalone (into BENCH_TOURS_DB on the bench's server, then it prints the sizes):
 * `npx tsx bench/generateTours.ts`.
 */
import { Effect, Layer } from "effect"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { generatePublishableKey } from "../src/partner/auth/publishableKey.js"
import { benchServer } from "./server.js"
import { readSettings } from "./settings.js"

export interface CatalogueOptions {
  readonly sites: number
  /** Tours of a site owner; a partner operator has 60% of it. */
  readonly toursPerOperator: number
}

export interface Catalogue {
  readonly sites: ReadonlyArray<
    { readonly id: string; readonly domain: string; readonly ownerOperatorId: string; readonly ownerUserId: string }
  >
  /** Row counts of the catalogue tables. */
  readonly counts: Readonly<Record<string, number>>
  /** Published tours visible on site #1 (what its publishable keys read). */
  readonly visibleOnFirstSite: number
  readonly generationSeconds: number
}

export const LOCALES = ["nb", "de", "fr", "es", "it"] as const

const log = (line: string) => console.log(`[generate-tours] ${line}`)

export const migrate = (url: string) => Effect.scoped(Layer.build(layerFromUrl(url, 2)))

const CATALOGUE_SQL = (o: CatalogueOptions) => `
SELECT setseed(0.4242);

-- Operators: 1..S own a site each; S+1..3S are partners (two per site).
CREATE TEMP TABLE g_ops AS
SELECT n, (n <= ${o.sites}) AS owner, gen_random_uuid() AS id, gen_random_uuid() AS user_id
FROM generate_series(1, ${o.sites * 3}) n;

INSERT INTO operators (id, name, legal_name, org_number, timezone)
SELECT id, 'Bench Operator ' || n, 'Bench Operator ' || n || ' AS', lpad((900000000 + n)::text, 9, '0'), 'Europe/Oslo' FROM g_ops;
INSERT INTO users (id, email, name) SELECT user_id, 'owner' || n || '@bench-tours.example', 'Owner ' || n FROM g_ops;
INSERT INTO memberships (operator_id, user_id, role) SELECT id, user_id, 'owner' FROM g_ops;

CREATE TEMP TABLE g_sites AS
SELECT n, gen_random_uuid() AS id, 'site' || n || '.bench-tours.example' AS domain, id AS owner_id
FROM g_ops WHERE owner;
INSERT INTO sites (id, domain, name, owner_operator_id) SELECT id, domain, 'Bench Site ' || n, owner_id FROM g_sites;
INSERT INTO site_operators (site_id, operator_id)
SELECT s.id, p.id FROM g_sites s JOIN g_ops p ON NOT p.owner AND (p.n - ${o.sites} - 1) / 2 + 1 = s.n;

-- Tours.
CREATE TEMP TABLE g_tours AS
SELECT gen_random_uuid() AS id, op.id AS operator_id, op.n AS op_n, op.owner, k,
  random() AS r, floor(random() * 1000000)::int AS seed
FROM g_ops op, generate_series(1, CASE WHEN op.owner THEN ${o.toursPerOperator} ELSE ${
  Math.round(o.toursPerOperator * 0.6)
} END) k;

INSERT INTO tours (id, operator_id, slug, title, status, timezone, currency, created_at, updated_at,
  excerpt, duration_minutes, priced_per_booking, languages, rating_average, rating_count,
  meeting_point_name, meeting_point_address, meeting_point_lat, meeting_point_lng,
  cancellation_title, cancellation_free_hours, min_age, difficulty, departure_times,
  description_html, included_html, excluded_html, inclusions, exclusions, highlights, know_before)
SELECT t.id, t.operator_id, 'tour-' || t.op_n || '-' || t.k,
  (ARRAY['Fjord', 'Glacier', 'Harbour', 'Northern Lights', 'Whale', 'Mountain', 'Island', 'Waterfall', 'City', 'Kayak'])[1 + t.seed % 10]
    || ' ' || (ARRAY['Cruise', 'Safari', 'Hike', 'Walk', 'Expedition', 'Tour', 'Adventure', 'Day Trip'])[1 + (t.seed / 10) % 8]
    || ' #' || t.op_n || '-' || t.k,
  CASE WHEN t.r < 0.9 THEN 'published' WHEN t.r < 0.95 THEN 'draft' ELSE 'archived' END,
  'Europe/Oslo', 'NOK',
  now() - make_interval(secs => floor(random() * 730 * 86400)::int),
  now() - make_interval(secs => floor(random() * 30 * 86400)::int),
  'A ' || (60 + t.seed % 300) || '-minute trip with a local guide: small groups, warm clothing provided and coffee on board.',
  60 + (t.seed % 8) * 30, (t.seed % 13 = 0),
  CASE t.seed % 4 WHEN 0 THEN ARRAY['en'] WHEN 1 THEN ARRAY['en', 'nb'] WHEN 2 THEN ARRAY['en', 'de'] ELSE ARRAY['en', 'nb', 'de', 'fr'] END,
  CASE WHEN t.seed % 5 = 0 THEN NULL ELSE round((3.5 + (t.seed % 150) / 100.0)::numeric, 2) END,
  CASE WHEN t.seed % 5 = 0 THEN NULL ELSE 5 + t.seed % 900 END,
  'Pier ' || (1 + t.seed % 30), 'Strandkaien ' || (1 + t.seed % 80) || ', 5013 Bergen',
  60.39 + (t.seed % 100) / 10000.0, 5.32 + (t.seed % 100) / 10000.0,
  'Free cancellation up to 24 hours before', 24, (ARRAY[0, 0, 6, 12, 16])[1 + t.seed % 5],
  (ARRAY['very_easy', 'easy', 'moderate', 'challenging', 'demanding'])[1 + t.seed % 5],
  CASE t.seed % 4 WHEN 0 THEN ARRAY['10:00'] WHEN 1 THEN ARRAY['09:00', '13:00'] WHEN 2 THEN ARRAY['08:30', '12:00', '15:30']
    ELSE ARRAY['11:00', '14:00', '17:00', '20:00'] END,
  '<h2>About this trip</h2>' || repeat(
    '<p>Leave the harbour behind and follow the <strong>steep walls of the fjord</strong> past waterfalls and small farms that '
    || 'cling to the slopes. Your guide tells the stories of the people who lived here, points out seals and eagles, and '
    || 'stops where the light is best. <a href="https://example.com/route">See the route</a>.</p>', 2 + t.seed % 4)
    || '<ul><li>Small groups of at most 12</li><li>Warm suits and blankets on board</li><li>Hot drinks included</li></ul>'
    || '<p><em>Good to know:</em> the trip runs in all weathers; dress for the day.</p>',
  '<ul><li>Guide</li><li>Hot drinks</li><li>Warm suits</li></ul>',
  '<ul><li>Hotel pick-up</li><li>Lunch</li></ul>',
  ARRAY['Guide', 'Hot drinks', 'Warm suits'], ARRAY['Hotel pick-up', 'Lunch'],
  ARRAY['Waterfalls up close', 'Seals and eagles', 'Small groups'],
  ARRAY['Dress warmly', 'Arrive 15 minutes early']
FROM g_tours t;

INSERT INTO tour_photos (tour_id, position, url)
SELECT t.id, p, 'https://images.bench-tours.example/' || t.id || '/' || p || '.jpg?w=1200'
FROM g_tours t, generate_series(0, 3 + t.seed % 9) p;

INSERT INTO tour_pricing_categories (tour_id, id, position, title, is_default, min_age, max_age)
SELECT t.id, c.id, c.pos, c.title, c.is_default, c.min_age, c.max_age
FROM g_tours t, (VALUES ('adult', 0, 'Adult', true, 16, NULL::int), ('child', 1, 'Child', false, 3, 15),
  ('senior', 2, 'Senior', false, 67, NULL::int)) c(id, pos, title, is_default, min_age, max_age)
WHERE c.id <> 'senior' OR t.seed % 3 = 0;

INSERT INTO tour_rates (tour_id, id, position, title, description)
SELECT t.id, 'rate-' || q.i, q.i, (ARRAY['Standard', 'With lunch', 'Private boat'])[q.i],
  (ARRAY['The regular trip.', 'The trip with a two-course lunch on board.', 'The boat for your group only.'])[q.i]
FROM g_tours t, generate_series(1, 1 + t.seed % 3) q(i);

INSERT INTO tour_linked_products (tour_id, position, label, language, linked_tour_id)
SELECT t.id, l - 1, (ARRAY['In German', 'Private version'])[l], (ARRAY['de', NULL])[l],
  (SELECT o.id FROM g_tours o WHERE o.operator_id = t.operator_id AND o.k = 1 + (t.k + l * 7) % 100)
FROM g_tours t, generate_series(1, t.seed % 3) l;

-- Translations: locale i for 60-90% of the tours.
CREATE TEMP TABLE g_tr AS
SELECT t.id AS tour_id, t.seed, loc.locale
FROM g_tours t, unnest(ARRAY[${LOCALES.map((l) => `'${l}'`).join(", ")}]) WITH ORDINALITY loc(locale, i)
WHERE (t.seed / 7 + loc.i * 13) % 100 < 90 - (loc.i - 1) * 7;

INSERT INTO tour_translations (tour_id, locale, title, excerpt, description_html, included_html, excluded_html,
  inclusions, exclusions, highlights, know_before, meeting_point_name, cancellation_title)
SELECT g.tour_id, g.locale, '[' || g.locale || '] ' || t.title, '[' || g.locale || '] ' || t.excerpt,
  '<h2>[' || g.locale || ']</h2>' || t.description_html, t.included_html, t.excluded_html,
  ARRAY['[' || g.locale || '] Guide', '[' || g.locale || '] Hot drinks'], NULL, t.highlights, t.know_before,
  '[' || g.locale || '] ' || t.meeting_point_name, '[' || g.locale || '] ' || t.cancellation_title
FROM g_tr g JOIN tours t ON t.id = g.tour_id;

INSERT INTO tour_pricing_category_translations (tour_id, category_id, locale, title)
SELECT c.tour_id, c.id, g.locale, '[' || g.locale || '] ' || c.title
FROM g_tr g JOIN tour_pricing_categories c ON c.tour_id = g.tour_id;

INSERT INTO tour_rate_translations (tour_id, rate_id, locale, title, description)
SELECT r.tour_id, r.id, g.locale, '[' || g.locale || '] ' || r.title, '[' || g.locale || '] ' || r.description
FROM g_tr g JOIN tour_rates r ON r.tour_id = g.tour_id;

INSERT INTO tour_season_cache (tour_id, from_price_minor, from_price_currency, known, next_available_date, computed_at)
SELECT t.id, 39900 + (t.seed % 40) * 2500, 'NOK', t.seed % 10 <> 0,
  CASE WHEN t.seed % 10 <> 0 THEN current_date + t.seed % 20 END, now()
FROM g_tours t WHERE t.seed % 5 <> 1;

-- What each site sells: its owner's tours, its partners' tours, 40 of each other owner's as a reseller.
INSERT INTO site_tours (site_id, tour_id, position, sold_by)
SELECT s.id, t.id, t.k, 'operator' FROM g_sites s JOIN g_tours t ON t.operator_id = s.owner_id
UNION ALL
SELECT so.site_id, t.id, t.k, 'operator' FROM site_operators so JOIN g_tours t ON t.operator_id = so.operator_id
UNION ALL
SELECT s.id, t.id, 1000 + t.k, 'site_owner' FROM g_sites s JOIN g_tours t ON t.owner AND t.operator_id <> s.owner_id AND t.k <= 40;
`

/** Generates the catalogue into the migrated database at `url`. */
export const generateCatalogue = (url: string, options: CatalogueOptions) =>
  Effect.promise(async (): Promise<Catalogue> => {
    const started = Date.now()
    const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
    await client.connect()
    try {
      await client.query("BEGIN")
      await client.query(CATALOGUE_SQL(options))
      const sites = (await client.query<{ id: string; domain: string; owner_id: string; user_id: string }>(
        "SELECT s.id, s.domain, s.owner_id, o.user_id FROM g_sites s JOIN g_ops o ON o.id = s.owner_id ORDER BY s.n"
      )).rows.map((r) => ({ id: r.id, domain: r.domain, ownerOperatorId: r.owner_id, ownerUserId: r.user_id }))
      await client.query("COMMIT")
      await client.query("VACUUM ANALYZE")
      const tables = [
        "tours",
        "site_tours",
        "tour_photos",
        "tour_pricing_categories",
        "tour_rates",
        "tour_linked_products",
        "tour_translations",
        "tour_pricing_category_translations",
        "tour_rate_translations",
        "tour_season_cache"
      ]
      const counts: Record<string, number> = {}
      for (const t of tables) {
        counts[t] = (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}`)).rows[0]!.n
      }
      const visible = (await client.query<{ n: number }>(
        `SELECT count(DISTINCT t.id)::int AS n FROM site_tours st JOIN tours t ON t.id = st.tour_id
         WHERE st.site_id = $1 AND t.status = 'published'`,
        [sites[0]!.id]
      )).rows[0]!.n
      const generationSeconds = Math.round((Date.now() - started) / 100) / 10
      log(
        `${counts.tours} tours on ${sites.length} sites (${visible} published on site #1), ` +
          `${counts.tour_photos} photos, ${counts.tour_translations} translations, in ${generationSeconds} s`
      )
      return { sites, counts, visibleOnFirstSite: visible, generationSeconds }
    } finally {
      await client.end()
    }
  })

/** `count` publishable keys for the site, made by its owner (as `keys create-publishable` does). */
export const createPublishableKeys = (url: string, site: Catalogue["sites"][number], count: number) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
    await client.connect()
    try {
      const keys = Array.from({ length: count }, () => generatePublishableKey())
      await client.query(
        `INSERT INTO publishable_keys (id, site_id, name, allowed_origins, created_by)
         SELECT id, $2::uuid, 'Bench widget ' || n, ARRAY['https://${site.domain}'], $3::uuid
         FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n)`,
        [keys.map((k) => k.id), site.id, site.ownerUserId]
      )
      return keys
    } finally {
      await client.end()
    }
  })

export const catalogueOptions = (): CatalogueOptions => ({
  sites: Number(process.env.BENCH_TOURS_SITES ?? 4),
  toursPerOperator: Number(process.env.BENCH_TOURS_PER_OPERATOR ?? 250)
})

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const settings = readSettings()
  const name = process.env.BENCH_TOURS_DB || "partner_bench_tours"
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const server = yield* benchServer(settings)
      const url = yield* createDatabase(server.adminUrl, name)
      yield* migrate(url)
      const catalogue = yield* generateCatalogue(url, catalogueOptions())
      console.log(JSON.stringify({ database: name, ...catalogue }, null, 2))
    }))
  ).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
