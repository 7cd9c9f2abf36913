/**
 * The benchmark dataset: BENCH_OPERATORS operators (default 100), each with an owner, a site and
 * four tours, and BENCH_BOOKINGS bookings (default 1,000,000) spread evenly over the operators,
 * created over the two years before generation (more recent days busier), departing 0-120 days
 * after booking. Generated in SQL (generate_series, a few INSERT ... SELECT), then VACUUM ANALYZE.
 *
 * The database is kept and reused: a `bench_meta` row written in the same transaction as the data
 * marks it complete (with the generator version and sizes); `--regenerate` / BENCH_REGENERATE=1
 * drops and rebuilds it.
 *
 * Two keys are made by the owner of operator #1 (who is also admin of #2 and #3): one for
 * operator #1 and one for operators #1-#3. Their tokens are stored in bench_meta (bench data only).
 *
 * The booking-system mirror of operator #1 (manifestSql): one account, and two departure days of
 * manifest rows (the measured manifest day, and a second day the check-in writes go to), each with
 * about 400 rows over 40 departures and about 1,000 passengers. A third key, for operator #1, reads
 * the manifest and writes check-ins, with a daily check-in limit of 1,000,000,000.
 *
 * Standalone: `npx tsx bench/generate.ts [--regenerate]`.
 */
import { Effect, Layer } from "effect"
import { pathToFileURL } from "node:url"
import pg from "pg"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { generateSecretKey, hashSecret } from "../src/partner/auth/apiKey.js"
import type { Scope } from "../src/partner/auth/scopes.js"
import { benchServer } from "./server.js"
import { databaseUrlFor, readSettings, type Settings } from "./settings.js"

/** Bump when the generated data changes shape: older databases are then regenerated. */
export const GENERATOR_VERSION = 2

export interface BenchKey {
  readonly id: string
  readonly token: string
  readonly operatorIds: ReadonlyArray<string>
}

/** The mirrored days of operator #1 (manifestSql). */
export interface ManifestInfo {
  /** The day the manifest scenario reads (the dataset's generation day). */
  readonly date: string
  /** The next day, the same shape: the check-in writes change its rows, so `date` stays as generated. */
  readonly writeDate: string
  readonly accountId: string
  /** Per day: manifest rows (live and cancelled), departures, live passengers, rows checked in on `date`. */
  readonly rows: number
  readonly departures: number
  readonly passengers: number
  readonly checkedInRows: number
  /** Operator #1, scopes manifest:read, guests.contact:read and checkins:write; daily check-in limit 10^9. */
  readonly key: BenchKey
}

export interface DatasetInfo {
  readonly version: number
  readonly bookings: number
  readonly operators: number
  /** When the data was generated: scenario dates are taken relative to it. */
  readonly generatedAt: string
  readonly generationSeconds: number
  readonly operatorIds: ReadonlyArray<string>
  readonly singleKey: BenchKey
  readonly multiKey: BenchKey
  readonly manifest: ManifestInfo
}

export interface Dataset extends DatasetInfo {
  readonly url: string
  readonly reused: boolean
}

const log = (line: string) => console.log(`[generate] ${line}`)

const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url, application_name: "bench-generate" })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/** The marker of a complete dataset, if the database exists and holds one that fits the settings. */
const existingDataset = async (adminUrl: string, settings: Settings): Promise<DatasetInfo | undefined> => {
  const exists = await withClient(
    adminUrl,
    (c) =>
      c.query("SELECT 1 FROM pg_database WHERE datname = $1", [settings.databaseName]).then((r) => r.rowCount === 1)
  )
  if (!exists) return undefined
  return withClient(databaseUrlFor(adminUrl, settings.databaseName), async (c) => {
    const table = await c.query<{ t: string | null }>("SELECT to_regclass('public.bench_meta')::text AS t")
    if (!table.rows[0]?.t) return undefined
    const meta = await c.query<{ value: DatasetInfo }>("SELECT value FROM bench_meta WHERE name = 'dataset'")
    const info = meta.rows[0]?.value
    if (!info) return undefined
    if (
      info.version !== GENERATOR_VERSION || info.bookings !== settings.bookings || info.operators !== settings.operators
    ) {
      log(
        `existing dataset (v${info.version}, ${info.bookings} bookings, ${info.operators} operators) does not match the settings`
      )
      return undefined
    }
    const keys = await c.query(
      "SELECT id FROM api_keys WHERE id = ANY($1) AND revoked_at IS NULL",
      [[info.singleKey.id, info.multiKey.id, info.manifest.key.id]]
    )
    const count = await c.query<{ n: string }>("SELECT count(*) AS n FROM bookings")
    const rows = await c.query<{ n: string }>(
      "SELECT count(*) AS n FROM manifest_rows WHERE account_id = $1 AND departure_date = $2",
      [info.manifest.accountId, info.manifest.date]
    )
    if (
      keys.rowCount !== 3 || Number(count.rows[0]!.n) !== info.bookings ||
      Number(rows.rows[0]!.n) !== info.manifest.rows
    ) {
      log("existing dataset is incomplete (keys, bookings or manifest rows missing)")
      return undefined
    }
    return info
  })
}

/** Applies the service's migrations (the same migrator the service runs at start). */
const migrate = (url: string) => Effect.scoped(Layer.build(layerFromUrl(url, 2)))

// Names and words the generator draws from (ASCII so e-mail addresses and domains stay plain).
const PLACES = [
  "Oslofjord",
  "Bergen",
  "Tromso",
  "Lofoten",
  "Geiranger",
  "Stavanger",
  "Alesund",
  "Lisboa",
  "Porto",
  "Algarve"
]
const PORTUGUESE_FROM = 7 // PLACES[7..] are in Portugal (EUR, Europe/Lisbon)
const KINDS = [
  "Explorer",
  "Safari",
  "Cruises",
  "Adventures",
  "Kayak",
  "Sightseeing",
  "Expeditions",
  "RIB Tours",
  "Walks",
  "Food Tours"
]
const TOUR_TITLES = [
  "Morning Fjord Cruise",
  "Sunset Sail",
  "Whale Watching",
  "Northern Lights Chase",
  "Old Town Walking Tour",
  "Kayak Adventure",
  "Food and Wine Walk",
  "RIB Speedboat Safari",
  "Glacier Hike",
  "Island Hopping",
  "Dolphin Watch",
  "Harbour Lights Evening Cruise"
]
const FIRST = [
  "Emma",
  "Nora",
  "Sofie",
  "Ingrid",
  "Maja",
  "Ella",
  "Olivia",
  "Leah",
  "Sara",
  "Ida",
  "Jakob",
  "Emil",
  "Noah",
  "Oliver",
  "Filip",
  "Lukas",
  "William",
  "Henrik",
  "Magnus",
  "Aksel",
  "Maria",
  "Ana",
  "Beatriz",
  "Ines",
  "Joana",
  "Joao",
  "Tiago",
  "Rui",
  "Pedro",
  "Miguel",
  "Hannah",
  "Mia",
  "Lena",
  "Paul",
  "Felix",
  "James",
  "Grace",
  "Chloe",
  "Aiko",
  "Kenji"
]
const LAST = [
  "Hansen",
  "Johansen",
  "Olsen",
  "Larsen",
  "Andersen",
  "Pedersen",
  "Nilsen",
  "Kristiansen",
  "Jensen",
  "Karlsen",
  "Berg",
  "Haugen",
  "Hagen",
  "Lie",
  "Dahl",
  "Lund",
  "Moen",
  "Bakken",
  "Solberg",
  "Strand",
  "Silva",
  "Santos",
  "Ferreira",
  "Pereira",
  "Oliveira",
  "Costa",
  "Rodrigues",
  "Martins",
  "Sousa",
  "Fernandes",
  "Schmidt",
  "Muller",
  "Smith",
  "Brown",
  "Wilson",
  "Martin",
  "Dubois",
  "Rossi",
  "Tanaka",
  "Kowalski"
]
const sqlArray = (values: ReadonlyArray<string>) =>
  `ARRAY[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")}]`

const operatorsSql = (operators: number) => `
  CREATE TEMP TABLE bench_ops ON COMMIT DROP AS
  SELECT n,
    gen_random_uuid() AS id, gen_random_uuid() AS site_id, gen_random_uuid() AS user_id,
    place || ' ' || kind || CASE WHEN n > 100 THEN ' ' || n ELSE '' END AS name,
    place_slug || '-' || kind_slug || CASE WHEN n > 100 THEN '-' || n ELSE '' END || '.example' AS domain,
    CASE WHEN pt THEN ' Lda' ELSE ' AS' END AS legal_suffix,
    CASE WHEN pt THEN 'Europe/Lisbon' ELSE 'Europe/Oslo' END AS tz,
    CASE WHEN pt THEN 'EUR' ELSE 'NOK' END AS cur,
    (ARRAY[8, 10, 12, 15, 20])[1 + n % 5]::numeric(6, 3) AS rate,
    (${sqlArray(FIRST)})[1 + (n * 7) % ${FIRST.length}] || ' '
      || (${sqlArray(LAST)})[1 + (n * 11) % ${LAST.length}] AS owner_name
  FROM generate_series(1, ${operators}) AS n
  CROSS JOIN LATERAL (
    SELECT (${sqlArray(PLACES)})[1 + ((n - 1) / 10) % 10] AS place,
      (${sqlArray(KINDS)})[1 + (n - 1) % 10] AS kind,
      ((n - 1) / 10) % 10 >= ${PORTUGUESE_FROM} AS pt
  ) p
  CROSS JOIN LATERAL (
    SELECT lower(p.place) AS place_slug, lower(replace(p.kind, ' ', '-')) AS kind_slug
  ) s;

  INSERT INTO operators (id, name, legal_name, org_number, timezone, created_at)
  SELECT id, name, name || legal_suffix, CASE WHEN cur = 'EUR' THEN 'PT5' ELSE '9' END || lpad((n * 7919 % 100000000)::text, 8, '0'),
    tz, now() - interval '3 years' + n * interval '1 day'
  FROM bench_ops;

  INSERT INTO users (id, email, name, created_at)
  SELECT user_id, 'owner@' || domain, owner_name, now() - interval '3 years' + n * interval '1 day' FROM bench_ops;

  INSERT INTO memberships (operator_id, user_id, role) SELECT id, user_id, 'owner' FROM bench_ops;
  -- The owner of operator #1 also administers #2 and #3 (the multi-operator key's creator).
  INSERT INTO memberships (operator_id, user_id, role)
  SELECT o.id, (SELECT user_id FROM bench_ops WHERE n = 1), 'admin' FROM bench_ops o WHERE o.n IN (2, 3);

  INSERT INTO sites (id, domain, name, owner_operator_id) SELECT site_id, domain, name, id FROM bench_ops;

  CREATE TEMP TABLE bench_tours ON COMMIT DROP AS
  SELECT o.n AS op_n, k, gen_random_uuid() AS id,
    split_part(o.name, ' ', 1) || ' ' || (${sqlArray(TOUR_TITLES)})[1 + (o.n * 4 + k) % ${TOUR_TITLES.length}] AS title,
    CASE WHEN o.cur = 'EUR' THEN 2500 + ((o.n * 7 + k * 13) % 12) * 1000 ELSE 39900 + ((o.n * 7 + k * 13) % 12) * 10000 END AS price,
    (CASE k WHEN 0 THEN ARRAY['09:00', '12:00', '15:00'] WHEN 1 THEN ARRAY['10:30', '14:30']
            WHEN 2 THEN ARRAY['08:00'] ELSE ARRAY['18:00', '20:30'] END)::text[] AS times
  FROM bench_ops o CROSS JOIN generate_series(0, 3) AS k;

  INSERT INTO tours (id, operator_id, slug, title, status, timezone, currency, created_at, updated_at)
  SELECT t.id, o.id, lower(replace(t.title, ' ', '-')) || '-' || o.n || '-' || t.k, t.title, 'published', o.tz, o.cur,
    now() - interval '3 years' + o.n * interval '1 day', now() - interval '30 days'
  FROM bench_tours t JOIN bench_ops o ON o.n = t.op_n;

  INSERT INTO site_tours (site_id, tour_id, position)
  SELECT o.site_id, t.id, t.k FROM bench_tours t JOIN bench_ops o ON o.n = t.op_n;
`

/**
 * One INSERT ... SELECT for every booking, in creation order (as a live table fills up).
 * The innermost subquery draws the random numbers (its volatile target list keeps it from being
 * flattened, so each is drawn once per row); the outer ones derive consistent columns from them.
 */
const bookingsSql = (bookings: number, operators: number) => `
  INSERT INTO bookings (
    confirmation_code, status, operator_id, tour_id, tour_name, site_id, experience_date, start_time, timezone,
    participants, amount_minor, currency, channel, guest_name, guest_email, guest_phone, provider_reference,
    payment_strategy, pay_later_status, pay_later_amount_minor, pay_later_currency, pay_later_charge_at, pay_later_paid_at,
    commission_amount_minor, commission_rate_percent, commission_currency, commission_status, cancel_reason,
    booked_at, created_at, updated_at
  )
  SELECT
    'BK' || lpad(i::text, 8, '0'),
    status, op_id, tour_id, title, site_id, exp_date, start_time, tz,
    pax, amount, cur,
    CASE WHEN r_channel < 0.45 THEN 'website' WHEN r_channel < 0.62 THEN 'widget' WHEN r_channel < 0.76 THEN 'getyourguide'
         WHEN r_channel < 0.88 THEN 'viator' WHEN r_channel < 0.97 THEN 'desk' END,
    first_name || ' ' || last_name,
    CASE WHEN r_misc < 0.97 THEN lower(first_name) || '.' || lower(last_name) || (i % 1000) || '@'
      || (ARRAY['gmail.com', 'outlook.com', 'yahoo.com', 'online.no', 'sapo.pt', 'icloud.com'])[1 + i % 6] END,
    CASE WHEN r_misc < 0.9 THEN
      CASE WHEN cur = 'EUR' THEN '+351 9' || lpad((i::bigint * 7919 % 100000000)::text, 8, '0')
           ELSE '+47 4' || lpad((i::bigint * 7919 % 10000000)::text, 7, '0') END END,
    'BKN-' || (10000000 + i),
    CASE WHEN pay_later THEN 'pay_later' ELSE 'pay_now' END,
    CASE WHEN NOT pay_later THEN NULL
         WHEN status IN ('CANCELLED', 'REFUNDED') THEN 'cancelled'
         WHEN charge_at > now() THEN 'upcoming'
         WHEN r_upd < 0.04 THEN 'failed'
         ELSE 'collected' END,
    CASE WHEN pay_later THEN amount - amount / 5 END,
    CASE WHEN pay_later THEN cur END,
    CASE WHEN pay_later THEN charge_at END,
    CASE WHEN pay_later AND status IN ('RESERVED', 'CONFIRMED') AND charge_at <= now() AND r_upd >= 0.04
      THEN charge_at + make_interval(secs => 5 + r_misc * 600) END,
    CASE WHEN sold THEN round(amount * rate / 100)::bigint END,
    CASE WHEN sold THEN rate END,
    CASE WHEN sold THEN cur END,
    CASE WHEN NOT sold THEN NULL
         WHEN status IN ('CANCELLED', 'REFUNDED') THEN 'voided'
         WHEN exp_date >= current_date THEN 'pending'
         WHEN exp_date >= current_date - 30 THEN 'invoiced'
         ELSE 'paid' END,
    CASE WHEN status IN ('CANCELLED', 'REFUNDED') THEN
      (ARRAY['customer_request', 'weather', 'operator_cancelled', 'illness', 'duplicate'])[1 + floor(r_misc * 5)::int] END,
    CASE WHEN sold THEN created + make_interval(secs => 2 + r_misc * 90) END,
    created,
    CASE WHEN status IN ('CANCELLED', 'REFUNDED') THEN created + (now() - created) * (r_upd * 0.5)
         WHEN status = 'ABANDONED' THEN least(now(), created + interval '30 minutes')
         WHEN sold AND r_upd < 0.12 THEN created + (now() - created) * (r_upd * 4)
    END
  FROM (
    SELECT d.*,
      d.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED') AS sold,
      d.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED') AND d.r_pay < 0.2 AND d.lead >= 3 AS pay_later,
      ((d.exp_date - 2) + time '09:00') AT TIME ZONE d.tz AS charge_at
    FROM (
      SELECT g.*, o.id AS op_id, o.site_id, o.tz, o.cur, o.rate, t.id AS tour_id, t.title,
        t.times[1 + floor(g.r_time * array_length(t.times, 1))::int] AS start_time,
        c.created, c.lead,
        (c.created AT TIME ZONE o.tz)::date + c.lead AS exp_date,
        1 + floor(power(g.r_pax, 2) * 8)::int AS pax,
        t.price * (1 + floor(power(g.r_pax, 2) * 8)::int) AS amount,
        (${sqlArray(FIRST)})[1 + g.i % ${FIRST.length}] AS first_name,
        (${sqlArray(LAST)})[1 + (g.i / ${FIRST.length}) % ${LAST.length}] AS last_name,
        CASE WHEN g.r_status < 0.02 THEN CASE WHEN c.created > now() - interval '1 day' THEN 'HOLD' ELSE 'ABANDONED' END
             WHEN g.r_status < 0.06 THEN 'RESERVED'
             WHEN g.r_status < 0.13 THEN 'CANCELLED'
             WHEN g.r_status < 0.16 THEN 'REFUNDED'
             ELSE 'CONFIRMED' END AS status
      FROM (
        SELECT i, 1 + (i - 1) % ${operators} AS op_n,
          random() AS r_created, random() AS r_tour, random() AS r_status, random() AS r_lead, random() AS r_time,
          random() AS r_pax, random() AS r_channel, random() AS r_pay, random() AS r_upd, random() AS r_misc
        FROM generate_series(1, ${bookings}) AS i
      ) g
      JOIN bench_ops o ON o.n = g.op_n
      JOIN bench_tours t ON t.op_n = g.op_n AND t.k = floor(g.r_tour * 4)::int
      CROSS JOIN LATERAL (
        SELECT now() - (1 - sqrt(g.r_created)) * interval '730 days' AS created,
          floor(power(g.r_lead, 2) * 121)::int AS lead
      ) c
    ) d
  ) b
  ORDER BY created
`

/** The mirror's shape: products × rates × start times = departures per day. */
const MIRROR_PRODUCTS = 5
const MIRROR_RATES = ["Standard", "Premium"]
const MIRROR_START_TIMES = 4
/** Manifest rows per day; about 5% are cancelled, and live rows carry 2.5 passengers on average. */
const MIRROR_ROWS_PER_DAY = 420
/** The manifest key's daily check-in limit: far above what a run writes. */
const CHECKIN_DAILY_LIMIT = 1_000_000_000
const PICKUPS = ["Radisson Blu Plaza", "Thon Hotel Opera", "Cruise terminal Vippetangen", "Aker Brygge pier"]

/**
 * Operator #1's booking-system mirror, as the mirror refresh would have left it, for two days: the
 * manifest day (the generation day, UTC) and the next one (the check-in scenario's rows). Everything
 * is derived from the row number, not from random(), so every generation gives the same rows.
 *
 * - One Bókun account linked to operator #1; its four tours are four of the account's products,
 *   a fifth product (a private charter) has no tour.
 * - Per day 420 rows over 5 products × 2 rates × 4 start times = 40 departures
 *   (row i goes to departure (17 i) mod 40, so each gets 10-11). About 1 in 20 is CANCELLED, 1 in
 *   20 RESERVED. 1-5 participants (mean 2.5), Adult and Child lines. Channels: 30% the service's own
 *   checkout (linked to one of operator #1's bookings, whose confirmation code the manifest shows),
 *   GetYourGuide 20%, Viator 20%, direct 20%, a hotel reseller 10%. Pickups on a quarter, payment
 *   PAID / PARTIALLY_PAID / NOT_PAID, a few guests without e-mail or phone.
 * - Check-ins on the manifest day: the first departure of each product and rate has its live rows
 *   checked in (some with fewer present), 1 in 11 of them no-show.
 * - A mirror_days row per day (synced 5 minutes before generation).
 */
const manifestSql = (rowsPerDay: number) => `
  CREATE TEMP TABLE bench_account ON COMMIT DROP AS
  SELECT gen_random_uuid() AS id, (SELECT id FROM bench_ops WHERE n = 1) AS operator_id,
    (now() AT TIME ZONE 'UTC')::date AS day0;

  INSERT INTO booking_system_accounts (id, kind, name, base_url, access_key, secret_key, created_at)
  SELECT id, 'bokun', 'bench: Oslofjord Explorer on Bokun', 'http://127.0.0.1:9', 'bench-access', 'bench-secret',
    now() - interval '1 year'
  FROM bench_account;

  UPDATE operators SET booking_system_account_id = a.id FROM bench_account a WHERE operators.id = a.operator_id;

  CREATE TEMP TABLE bench_products ON COMMIT DROP AS
  SELECT p, 'bench-product-' || (p + 1) AS product_id, t.id AS tour_id,
    coalesce(t.title, 'Oslofjord Private Charter') AS title,
    ARRAY(
      SELECT lpad((8 + p + 3 * s)::text, 2, '0') || CASE WHEN p % 2 = 1 THEN ':30' ELSE ':00' END
      FROM generate_series(0, ${MIRROR_START_TIMES - 1}) AS s ORDER BY s
    ) AS times
  FROM generate_series(0, ${MIRROR_PRODUCTS - 1}) AS p
  LEFT JOIN bench_tours t ON t.op_n = 1 AND t.k = p;

  UPDATE tours SET booking_system_product_id = p.product_id FROM bench_products p WHERE tours.id = p.tour_id;

  -- Operator #1's sold bookings, in a fixed order, for the rows the service's own checkout sold.
  CREATE TEMP TABLE bench_service_bookings ON COMMIT DROP AS
  SELECT row_number() OVER (ORDER BY confirmation_code) - 1 AS j, id, confirmation_code
  FROM bookings
  WHERE operator_id = (SELECT operator_id FROM bench_account) AND status IN ('CONFIRMED', 'RESERVED')
  ORDER BY confirmation_code LIMIT 1000;

  INSERT INTO manifest_rows (
    account_id, line_id, booking_id, reference, external_reference, operator_id, tour_id, service_booking_id,
    status, product_id, product_title, rate_id, rate_title, start_time_id, departure_date, start_time, timezone,
    participants, pax_breakdown, channel_class, channel_source, channel_title, guest_name, guest_email, guest_phone,
    pickup_place, pickup_time, payment_status, total_minor, currency, booked_at, source_updated_at,
    first_seen_at, synced_at, cancelled_at
  )
  SELECT a.id, 'bench-line-' || day_n || '-' || i, (700000 + day_n * 1000 + i)::text,
    'OSL-T' || (70000 + day_n * 1000 + i),
    CASE ch WHEN 0 THEN sb.confirmation_code WHEN 1 THEN 'GYG' || upper(to_hex(1000003 * i + day_n))
            WHEN 2 THEN 'BR-' || (1000000000 + 7919 * i + day_n) END,
    a.operator_id, pr.tour_id, CASE WHEN ch = 0 THEN sb.id END,
    status, pr.product_id, pr.title, pr.product_id || '-rate-' || (rate + 1), (${sqlArray(MIRROR_RATES)})[rate + 1],
    pr.product_id || '-time-' || (slot + 1), a.day0 + day_n, pr.times[slot + 1], 'Europe/Oslo',
    pax,
    jsonb_build_array(jsonb_build_object('title', 'Adult', 'quantity', pax - children))
      || CASE WHEN children > 0 THEN jsonb_build_array(jsonb_build_object('title', 'Child', 'quantity', children)) ELSE '[]' END,
    (ARRAY['service', 'ota', 'ota', 'direct', 'reseller'])[ch + 1],
    (ARRAY['Tour Partner', 'GetYourGuide', 'Viator', NULL, 'Hotel Continental'])[ch + 1],
    (ARRAY['Tour Partner checkout', 'GetYourGuide', 'Viator.com', 'Direct booking', 'Hotel Continental concierge'])[ch + 1],
    CASE WHEN i % 97 <> 0 THEN first_name || ' ' || last_name END,
    CASE WHEN i % 19 <> 0 THEN lower(first_name) || '.' || lower(last_name) || i || '@example.com' END,
    CASE WHEN i % 9 <> 0 THEN '+47 9' || lpad(((7919 * i + 13 * day_n) % 10000000)::text, 7, '0') END,
    CASE WHEN i % 4 = 0 THEN (${sqlArray(PICKUPS)})[1 + (i / 4) % ${PICKUPS.length}] END,
    CASE WHEN i % 4 = 0 THEN to_char(pr.times[slot + 1]::time - interval '30 minutes', 'HH24:MI') END,
    CASE WHEN (3 * i) % 10 < 7 THEN 'PAID' WHEN (3 * i) % 10 = 7 THEN 'PARTIALLY_PAID' ELSE 'NOT_PAID' END,
    pax * 59900, 'NOK',
    now() - make_interval(days => 1 + i % 60, mins => i),
    CASE WHEN status = 'CANCELLED' THEN now() - make_interval(days => i % 5) END,
    now() - interval '30 days', now() - interval '5 minutes',
    CASE WHEN status = 'CANCELLED' THEN now() - make_interval(days => i % 5) END
  FROM bench_account a
  CROSS JOIN generate_series(0, 1) AS day_n
  CROSS JOIN generate_series(1, ${rowsPerDay}) AS i
  -- h: a scramble of the row number (distinct per row), so status, party size and channel do not
  -- follow the departure (17 i mod 40).
  CROSS JOIN LATERAL (SELECT (7919 * i + 104729 * day_n) % 10007 AS h) x
  CROSS JOIN LATERAL (
    SELECT (17 * i) % 40 AS d,
      CASE WHEN x.h % 20 = 7 THEN 'CANCELLED' WHEN x.h % 20 = 13 THEN 'RESERVED' ELSE 'CONFIRMED' END AS status,
      (ARRAY[2, 1, 3, 2, 4, 2, 1, 2, 3, 5, 2, 3])[1 + (x.h / 20) % 12] AS pax,
      (ARRAY[0, 0, 0, 1, 1, 2, 2, 3, 3, 4])[1 + (x.h / 240) % 10] AS ch,
      (${sqlArray(FIRST)})[1 + (7 * i + 3 * day_n) % ${FIRST.length}] AS first_name,
      (${sqlArray(LAST)})[1 + (11 * i + day_n) % ${LAST.length}] AS last_name
  ) v
  CROSS JOIN LATERAL (
    SELECT v.d / 8 AS p, (v.d / 4) % 2 AS rate, v.d % 4 AS slot,
      CASE WHEN i % 3 = 0 AND v.pax >= 3 THEN v.pax - 2 ELSE 0 END AS children
  ) w
  JOIN bench_products pr ON pr.p = w.p
  LEFT JOIN bench_service_bookings sb ON sb.j = (i * 7 + day_n * 500) % 1000;

  INSERT INTO manifest_checkins (row_id, status, present, updated_at)
  SELECT r.id,
    CASE WHEN n % 11 = 0 THEN 'no_show' ELSE 'checked_in' END,
    CASE WHEN n % 11 <> 0 AND n % 5 = 0 AND r.participants > 1 THEN r.participants - 1 END,
    now() - interval '10 minutes'
  FROM (
    SELECT r.*, split_part(r.line_id, '-', 4)::int AS n
    FROM manifest_rows r, bench_account a
    WHERE r.account_id = a.id AND r.departure_date = a.day0 AND r.status <> 'CANCELLED' AND r.start_time_id LIKE '%-time-1'
  ) r;

  INSERT INTO mirror_days (account_id, departure_date, synced_at)
  SELECT a.id, a.day0 + day_n, now() - interval '5 minutes' FROM bench_account a CROSS JOIN generate_series(0, 1) AS day_n;
`

export const createKey = async (
  client: pg.Client,
  createdBy: string,
  name: string,
  operatorIds: ReadonlyArray<string>,
  scopes: ReadonlyArray<Scope> = ["bookings:read", "guests.contact:read"]
): Promise<BenchKey> => {
  const key = generateSecretKey()
  await client.query(
    `INSERT INTO api_keys (id, secret_hash, name, scopes, created_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4::text[], $5, now(), now() + interval '10 years')`,
    [key.id, hashSecret(key.secret), name, scopes, createdBy]
  )
  for (const operatorId of operatorIds) {
    await client.query("INSERT INTO api_key_operators (key_id, operator_id) VALUES ($1, $2)", [key.id, operatorId])
  }
  return { id: key.id, token: key.token, operatorIds }
}

/** What manifestSql made, counted on the manifest day. */
const manifestSummary = async (client: pg.Client, key: BenchKey): Promise<ManifestInfo> => {
  const { rows: [row] } = await client.query<{
    account_id: string
    date: string
    rows: number
    departures: number
    passengers: number
    checked_in_rows: number
  }>(`
    SELECT a.id AS account_id, a.day0::text AS date, count(*)::int AS rows,
      count(DISTINCT (r.product_id, r.rate_id, r.start_time)) FILTER (WHERE r.status <> 'CANCELLED')::int AS departures,
      coalesce(sum(r.participants) FILTER (WHERE r.status <> 'CANCELLED'), 0)::int AS passengers,
      count(c.row_id)::int AS checked_in_rows
    FROM bench_account a
    JOIN manifest_rows r ON r.account_id = a.id AND r.departure_date = a.day0
    LEFT JOIN manifest_checkins c ON c.row_id = r.id
    GROUP BY a.id, a.day0`)
  const info = {
    date: row!.date,
    writeDate: new Date(Date.parse(`${row!.date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10),
    accountId: row!.account_id,
    rows: row!.rows,
    departures: row!.departures,
    passengers: row!.passengers,
    checkedInRows: row!.checked_in_rows,
    key
  }
  log(
    `manifest ${info.date}: ${info.rows} rows, ${info.departures} departures, ${info.passengers} passengers, ` +
      `${info.checkedInRows} rows checked in; check-ins are written to ${info.writeDate}`
  )
  return info
}

const generate = async (url: string, settings: Settings): Promise<DatasetInfo> =>
  withClient(url, async (client) => {
    const started = Date.now()
    const step = async (what: string, sql: string, params?: Array<unknown>) => {
      const t0 = Date.now()
      const result = await client.query(sql, params)
      const rows = Array.isArray(result) ? "" : result.rowCount !== null ? ` (${result.rowCount} rows)` : ""
      log(`${what}${rows}: ${((Date.now() - t0) / 1000).toFixed(1)} s`)
      return result
    }
    const [{ rolsuper }] = (await client.query<{ rolsuper: boolean }>(
      "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
    )).rows as [{ rolsuper: boolean }]

    await client.query("SET maintenance_work_mem = '1GB'")
    await client.query("SET work_mem = '1GB'")
    await client.query("SET synchronous_commit = off")
    await client.query("BEGIN")
    try {
      await client.query("SELECT setseed(0.2025)")
      await step("operators, owners, sites, tours", operatorsSql(settings.operators))

      // Bulk load: build the secondary (partial) indexes once at the end, from their own
      // definitions, instead of maintaining them row by row; skip the FK triggers when allowed
      // (every reference is built to exist).
      const indexes = (await client.query<{ name: string; def: string }>(`
        SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = 'bookings'::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`)).rows
      for (const index of indexes) await client.query(`DROP INDEX ${pg.escapeIdentifier(index.name)}`)
      if (rolsuper) await client.query("SET LOCAL session_replication_role = replica")
      await step(`bookings`, bookingsSql(settings.bookings, settings.operators))
      if (rolsuper) await client.query("SET LOCAL session_replication_role = origin")
      for (const index of indexes) await step(`index ${index.name}`, index.def)
      await step("booking-system mirror of operator #1 (two days)", manifestSql(MIRROR_ROWS_PER_DAY))

      const operatorIds = (await client.query<{ id: string }>("SELECT id FROM bench_ops ORDER BY n")).rows.map((r) =>
        r.id
      )
      const owner =
        (await client.query<{ user_id: string }>("SELECT user_id FROM bench_ops WHERE n = 1")).rows[0]!.user_id
      const singleKey = await createKey(client, owner, "bench: operator #1", operatorIds.slice(0, 1))
      const multiKey = await createKey(client, owner, "bench: operators #1-#3", operatorIds.slice(0, 3))
      const manifestKey = await createKey(
        client,
        owner,
        "bench: manifest and check-ins, operator #1",
        operatorIds.slice(0, 1),
        [
          "manifest:read",
          "guests.contact:read",
          "checkins:write"
        ]
      )
      // Its daily check-in limit (default 2,000) must not stop the write scenario.
      await client.query(
        "INSERT INTO api_key_daily_limits (key_id, action, daily_limit) VALUES ($1, 'checkins', $2)",
        [manifestKey.id, CHECKIN_DAILY_LIMIT]
      )
      const manifest = await manifestSummary(client, manifestKey)

      const generatedAt = (await client.query<{ now: Date }>("SELECT now()")).rows[0]!.now.toISOString()
      const info: DatasetInfo = {
        version: GENERATOR_VERSION,
        bookings: settings.bookings,
        operators: settings.operators,
        generatedAt,
        generationSeconds: 0,
        operatorIds,
        singleKey,
        multiKey,
        manifest
      }
      await client.query("CREATE TABLE bench_meta (name text PRIMARY KEY, value jsonb NOT NULL)")
      await client.query("INSERT INTO bench_meta (name, value) VALUES ('dataset', $1)", [JSON.stringify(info)])
      await step("commit", "COMMIT")
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined)
      throw error
    }
    await step("vacuum analyze", "VACUUM (ANALYZE)")
    const generationSeconds = Math.round((Date.now() - started) / 100) / 10
    await client.query(
      "UPDATE bench_meta SET value = jsonb_set(value, '{generationSeconds}', to_jsonb($1::numeric)) WHERE name = 'dataset'",
      [generationSeconds]
    )
    const info =
      (await client.query<{ value: DatasetInfo }>("SELECT value FROM bench_meta WHERE name = 'dataset'")).rows[0]!.value
    log(`dataset ready: ${info.bookings} bookings over ${info.operators} operators in ${generationSeconds} s`)
    return info
  })

/** Reuses the benchmark database when it holds a complete dataset for these settings, else builds it. */
export const ensureDataset = (adminUrl: string, settings: Settings) =>
  Effect.gen(function*() {
    const url = databaseUrlFor(adminUrl, settings.databaseName)
    if (!settings.regenerate) {
      const existing = yield* Effect.promise(() => existingDataset(adminUrl, settings))
      if (existing) {
        log(
          `reusing database ${settings.databaseName} generated ${existing.generatedAt} (BENCH_REGENERATE=1 rebuilds it)`
        )
        return { ...existing, url, reused: true } satisfies Dataset
      }
    }
    log(
      `creating database ${settings.databaseName}: ${settings.bookings} bookings over ${settings.operators} operators`
    )
    yield* createDatabase(adminUrl, settings.databaseName)
    yield* migrate(url)
    const info = yield* Effect.promise(() => generate(url, settings))
    return { ...info, url, reused: false } satisfies Dataset
  })

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const settings = readSettings()
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      const server = yield* benchServer(settings)
      const dataset = yield* ensureDataset(server.adminUrl, settings)
      const { bookings, operators, generatedAt, generationSeconds, reused, singleKey, multiKey, manifest } = dataset
      console.log(JSON.stringify(
        {
          database: settings.databaseName,
          bookings,
          operators,
          generatedAt,
          generationSeconds,
          reused,
          manifest: { ...manifest, key: manifest.key.id },
          keys: { single: singleKey.id, multi: multiKey.id, manifest: manifest.key.id }
        },
        null,
        2
      ))
    }))
  ).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
