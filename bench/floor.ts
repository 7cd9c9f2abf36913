/**
 * The floor: the cheapest server that does the service's work for GET /api/v1/bookings,
 * GET /api/v1/bookings/{id} and GET /api/v1/manifest. Bare node:http + a pg Pool of the same size,
 * and per request the same three statements as the service, copied verbatim:
 *   1. the key lookup of src/partner/auth/KeyAuthRepo.ts (then SHA-256 constant-time compare, revocation,
 *      expiry and operator checks in JS),
 *   2. the rate-limit upsert of src/http/RateLimiterRepo.ts (bucket `partner:<key id>`, window 60 s),
 *   3. the list (with the same filter clauses, in the same order, and the LATERAL per operator) or
 *      the get of src/partner/bookings/BookingsRepo.ts, or the day of src/partner/manifest/ManifestRepo.ts.
 * Cursors are the service's own (src/http/cursor.ts, secret from service_secrets), so a cursor
 * from one server works on the other. The bookings JSON is built by hand in the service's shape;
 * the manifest's rows are mapped by hand and grouped by the service's own domain function
 * (buildManifest of src/partner/manifest/rules.ts).
 *
 * POST /api/v1/manifest/{id}/checkin is the bare write, not the same SQL: after the same key lookup
 * and rate limit, the two statements of src/partner/checkins/CheckinsRepo.ts in one transaction (the row locked
 * while the service's own rule, decideCheckin of src/partner/checkins/rules.ts, decides; then the upsert),
 * with none of what the service adds around a write (Idempotency-Key claim and stored answer, daily
 * limit slot, audit entry).
 *
 * GET /api/v1/tours and GET /api/v1/tours/{id} with a publishable key (`?key=pk_widget_...`, for
 * `npm run bench:tours`): the key lookup of src/partner/auth/PublishableKeysRepo.ts; an answer held for the
 * key and URL (the service's own cache key, publicCacheKey of src/partner/tours/PublicCatalogueCache.ts,
 * kept for the same s-maxage) is sent again with `X-Cache: HIT` after that lookup alone, as the
 * service does; otherwise the rate-limit upsert (bucket `publishable:<key id>`) and the list or the
 * get of src/partner/tours/ToursRepo.ts, verbatim, mapped to JSON with the service's own pure mappers
 * (toTourSummary, toTourDetail) and kept (`X-Cache: MISS`). Tour cursors are the service's
 * (filters `{list: "tours"}`).
 *
 * GET /api/v1/sales (`npm run bench:sales`, issue 13): after the same key lookup and rate limit, the
 * three statements of src/partner/sales/SalesRepo.ts (own days, channel days, ledger coverage) sent
 * at once as Sales.summary sends them, then, when lines in another currency than the one asked for
 * are there, the rates read of src/rates/DailyRatesRepo.ts; the answer is built with the service's
 * own pure rules (src/partner/sales/rules.ts: ledgerGaps, foreignCurrencies, salesSummaryJson, the
 * text the service sends; src/rates/rules.ts: makeRateTable), in the order Sales.summary applies them.
 *
 * GET /api/v1/analytics/sites and /analytics/tours (`npm run bench:analytics`; neither `site`, `tour_id`
 * nor `surface`): after the same key lookup and rate limit, the statements of
 * src/partner/analytics/AnalyticsRepo.ts (with SalesRepo.coverage and DailyRatesRepo.range) in one
 * transaction with AnalyticsLimits' timeout and slot statements, the answer built by the service's pure
 * rules (siteItem, tourFigures, ledgerGaps, makeRateTable, converterTo) in Analytics.ts's order.
 *
 * GET /api/v1/finance/{payouts,chargebacks,pay-later,statements,invoices} (`npm run bench:finance`,
 * issue 15): after the same key lookup and rate limit (scope `finance:read`), the reads' statements
 * verbatim and the service's pure mappers: bench/financeFloor.ts.
 *
 * Env: DATABASE_URL, PORT, DB_POOL_SIZE (default 10), RATE_LIMIT_PER_MINUTE (default 300),
 * PUBLISHABLE_RATE_LIMIT_PER_MINUTE (default 1200).
 * Exits when its stdin closes (the runner holds the other end), so it never outlives the runner.
 */
import { Either } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { pgTypes } from "../src/db/pgTypes.js"
import { type CursorPosition, decodeCursor, encodeCursor, filterFingerprint } from "../src/http/cursor.js"
import * as analytics from "../src/partner/analytics/rules.js"
import { checkAnalyticsRange } from "../src/partner/analytics/rules.js"
import * as siteRules from "../src/partner/analytics/siteRules.js"
import { parseSecretKey, secretMatches, urlCarriesSecretKey } from "../src/partner/auth/apiKey.js"
import {
  parsePublishableKey,
  PUBLIC_CACHE_CONTROL,
  PUBLISHABLE_REQUESTS_PER_MINUTE
} from "../src/partner/auth/publishableKey.js"
import { STORED_STATUSES } from "../src/partner/bookings/booking.js"
import { type BookingDetailRow, type BookingRow, toDetail, toSummary } from "../src/partner/bookings/Bookings.js"
import { type CheckinChange, decideCheckin } from "../src/partner/checkins/rules.js"
import { toEntry } from "../src/partner/manifest/Manifest.js"
import type { ManifestRowRecord } from "../src/partner/manifest/ManifestRepo.js"
import { buildManifest, type ManifestEntry } from "../src/partner/manifest/rules.js"
import * as salesRules from "../src/partner/sales/rules.js"
import { PUBLIC_TTL_SECONDS, publicCacheKey } from "../src/partner/tours/PublicCatalogueCache.js"
import { catalogueLocale, TOUR_LIST_DEFAULT, TOUR_LIST_MAX } from "../src/partner/tours/tour.js"
import { toTourDetail, toTourSummary } from "../src/partner/tours/Tours.js"
import { addDays, converterTo, DEFAULT_LOOKBACK_DAYS, makeRateTable } from "../src/rates/rules.js"
import { financeFloor } from "./financeFloor.js"

// ---- connection: the same pool size and type parsers as src/db/Database.ts -----------------------

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  application_name: "bench-floor",
  types: pgTypes
})
pool.on("error", () => {})

const RATE_LIMIT = Number(process.env.RATE_LIMIT_PER_MINUTE ?? 300)
const PUBLISHABLE_RATE_LIMIT = Number(process.env.PUBLISHABLE_RATE_LIMIT_PER_MINUTE ?? PUBLISHABLE_REQUESTS_PER_MINUTE)
const WINDOW_SECONDS = 60

// ---- the statements, verbatim from src/services ----------------------------------------------------

/** src/partner/auth/KeyAuthRepo.ts findKey */
const FIND_KEY = `
        SELECT k.id, k.name, k.scopes, k.created_at, k.expires_at, k.revoked_at, k.secret_hash, k.kind,
          coalesce(
            json_agg(json_build_object('id', o.id, 'name', o.name) ORDER BY o.name, o.id)
              FILTER (WHERE o.id IS NOT NULL),
            '[]'
          ) AS partners
        FROM api_keys k
        LEFT JOIN api_key_operators ko ON ko.key_id = k.id
        LEFT JOIN memberships m
          ON m.operator_id = ko.operator_id AND m.user_id = k.created_by AND m.role IN ('owner', 'admin')
        LEFT JOIN operators o ON o.id = m.operator_id
        WHERE k.id = $1
        GROUP BY k.id`

/** src/http/RateLimiterRepo.ts count (RateLimiter.hit) */
const RATE_LIMIT_HIT = `
        INSERT INTO rate_limit_counters AS c (bucket, window_start, count)
        VALUES ($1, to_timestamp(floor(extract(epoch FROM now()) / $2) * $3), 1)
        ON CONFLICT (bucket) DO UPDATE SET
          count = CASE WHEN c.window_start = excluded.window_start THEN c.count + 1 ELSE 1 END,
          window_start = excluded.window_start
        RETURNING count,
          ceil(extract(epoch FROM (window_start + make_interval(secs => $4) - now())))::int AS reset_seconds`

/** src/partner/bookings/BookingsRepo.ts */
const LISTED = "('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')"

const SUMMARY_COLUMNS = `b.id, b.confirmation_code, b.status, b.operator_id, b.tour_id, b.tour_name,
  b.experience_date, b.start_time, b.timezone, b.participants, b.amount_minor, b.currency, b.channel,
  b.guest_name, b.guest_email, b.guest_phone, b.booked_at, b.created_at, b.updated_at,
  (extract(epoch FROM b.created_at) * 1000000)::bigint::text AS created_micros`

const DETAIL_COLUMNS = `${SUMMARY_COLUMNS}, b.provider_reference, b.payment_strategy,
  b.pay_later_status, b.pay_later_amount_minor, b.pay_later_currency, b.pay_later_charge_at, b.pay_later_paid_at,
  b.commission_amount_minor, b.commission_rate_percent, b.commission_currency, b.commission_status`

interface ListQuery {
  readonly operatorIds: ReadonlyArray<string>
  readonly limit: number
  readonly after: CursorPosition | undefined
  readonly dateFrom: string | undefined
  readonly dateTo: string | undefined
  readonly updatedSince: string | undefined
  readonly status: keyof typeof STORED_STATUSES | undefined
}

/**
 * BookingsRepo.list: the statement as @effect/sql compiles it (placeholders numbered in order; a single
 * clause stands alone, several are joined with AND inside parentheses, `sql.in` is `($n,$m)`).
 */
const listStatement = (q: ListQuery): { text: string; values: Array<unknown> } => {
  const values: Array<unknown> = [toPgArray(q.operatorIds)]
  const param = (value: unknown) => {
    values.push(value)
    return `$${values.length}`
  }
  const clauses = [`b.status IN ${LISTED}`]
  if (q.status) clauses.push(`b.status IN (${STORED_STATUSES[q.status].map(param).join(",")})`)
  if (q.dateFrom) clauses.push(`b.experience_date >= ${param(q.dateFrom)}::date`)
  if (q.dateTo) clauses.push(`b.experience_date <= ${param(q.dateTo)}::date`)
  if (q.updatedSince) clauses.push(`coalesce(b.updated_at, b.created_at) >= ${param(q.updatedSince)}::timestamptz`)
  if (q.after) {
    clauses.push(
      `(b.created_at, b.id) < (${param(microsToIso(q.after.createdMicros))}::timestamptz, ${param(q.after.id)}::uuid)`
    )
  }
  const where = clauses.length === 1 ? clauses[0]! : `(${clauses.join(" AND ")})`
  const take = q.limit + 1
  const text = `
          SELECT b.*, o.name AS operator_name
          FROM unnest($1::uuid[]) AS op(id)
          CROSS JOIN LATERAL (
            SELECT ${SUMMARY_COLUMNS}
            FROM bookings b
            WHERE b.operator_id = op.id AND ${where}
            ORDER BY b.created_at DESC, b.id DESC
            LIMIT ${param(take)}
          ) b
          JOIN operators o ON o.id = b.operator_id
          ORDER BY b.created_at DESC, b.id DESC
          LIMIT ${param(take)}`
  return { text, values }
}

const GET_STATEMENT = `
        SELECT ${DETAIL_COLUMNS}, o.name AS operator_name
        FROM bookings b JOIN operators o ON o.id = b.operator_id
        WHERE b.id = $1::uuid AND b.operator_id = ANY($2::uuid[])
          AND b.status IN ${LISTED}`

/** src/partner/manifest/ManifestRepo.ts day (its `sql.literal` column lists inlined) */
const MANIFEST_ROW_COLUMNS =
  `r.id, r.reference, coalesce(b.confirmation_code, r.external_reference) AS confirmation_code,
  r.status, r.operator_id, o.name AS operator_name, r.account_id, r.product_id, r.product_title, r.rate_id,
  r.rate_title, r.start_time, r.timezone, r.participants, r.pax_breakdown, r.channel_class, r.channel_source,
  r.channel_title, r.guest_name, r.pickup_place, r.pickup_time, r.payment_status,
  c.status AS check_in_status, c.present AS check_in_present`

const manifestStatement = (includeContact: boolean) => `
          WITH day AS (
            SELECT o.timezone AS day_timezone, (
              SELECT CASE WHEN bool_or(d.synced_at IS NULL) THEN NULL ELSE min(d.synced_at) END
              FROM (SELECT DISTINCT booking_system_account_id AS id FROM operators
                    WHERE id = ANY($1::uuid[]) AND booking_system_account_id IS NOT NULL) a
              LEFT JOIN mirror_days d ON d.account_id = a.id AND d.departure_date = $2::date
            ) AS day_synced_at
            FROM operators o WHERE o.id = $3::uuid
          )
          SELECT day.day_timezone, day.day_synced_at, m.*
          FROM day LEFT JOIN (
            SELECT ${MANIFEST_ROW_COLUMNS}, ${
  includeContact ? "r.guest_email, r.guest_phone" : "NULL::text AS guest_email, NULL::text AS guest_phone"
}
            FROM manifest_rows r
            JOIN operators o ON o.id = r.operator_id
            LEFT JOIN manifest_checkins c ON c.row_id = r.id
            LEFT JOIN bookings b ON b.id = r.service_booking_id
            WHERE r.operator_id = ANY($4::uuid[]) AND r.departure_date = $5::date
          ) m ON true`
const MANIFEST_WITH_CONTACT = manifestStatement(true)
const MANIFEST_WITHOUT_CONTACT = manifestStatement(false)

/** src/partner/checkins/CheckinsRepo.ts lockTarget and change (the clear or the upsert) */
const CHECKIN_TARGET = `
          SELECT r.id, r.operator_id, r.status, r.participants, c.status AS checkin_status, c.present
          FROM manifest_rows r
          LEFT JOIN manifest_checkins c ON c.row_id = r.id
          WHERE r.id = $1::uuid AND r.operator_id = ANY($2::uuid[])
          FOR NO KEY UPDATE OF r`
const CHECKIN_CLEAR = "DELETE FROM manifest_checkins WHERE row_id = $1::uuid"
const CHECKIN_UPSERT = `
              INSERT INTO manifest_checkins (row_id, status, present, updated_at, updated_by_key)
              VALUES ($1::uuid, $2, $3, now(), $4)
              ON CONFLICT (row_id) DO UPDATE SET
                status = excluded.status, present = excluded.present,
                updated_at = excluded.updated_at, updated_by_key = excluded.updated_by_key`

const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

/** src/http/cursor.ts microsToIso */
const microsToIso = (micros: string) => {
  const value = BigInt(micros)
  const iso = new Date(Number(value / 1000n)).toISOString()
  return iso.replace("Z", String(value % 1000n).padStart(3, "0") + "Z")
}

// ---- rows to JSON, in the service's shape ------------------------------------------------------------

interface Row {
  readonly [column: string]: any
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString())

// Rows are mapped with the service's own pure mappers (the same pg type parsers give the same values).
const summary = (row: Row, contact: boolean) => toSummary(row as BookingRow, contact)
const detail = (row: Row, contact: boolean) => toDetail(row as BookingDetailRow, contact)
const manifestEntry = (row: Row, contact: boolean) => toEntry(row as ManifestRowRecord, contact)

// ---- HTTP --------------------------------------------------------------------------------------------

class Refusal {
  constructor(readonly status: number, readonly detail: string, readonly headers: Record<string, string> = {}) {}
}

const send = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  type = "application/json",
  text = JSON.stringify(body)
) => {
  res.writeHead(status, { ...headers, "content-type": type, "content-length": Buffer.byteLength(text) })
  res.end(text)
}

interface Key {
  readonly id: string
  readonly scopes: ReadonlyArray<string>
  readonly partners: ReadonlyArray<{ id: string; name: string }>
}

let cursorSecret: Uint8Array | undefined

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

/** KeyAuth.authenticate + the rate limit and the scope check of the security middleware. */
const authenticate = async (req: IncomingMessage, headers: Record<string, string>, scope: string): Promise<Key> => {
  const header = req.headers.authorization ?? ""
  const token = BEARER.exec(header)?.[1] ?? ""
  const parts = parseSecretKey(token)
  if (!parts) throw new Refusal(401, "the key is malformed")
  const { rows: [row] } = await pool.query(FIND_KEY, [parts.id])
  if (!row || row.kind !== "secret" || !secretMatches(parts.secret, row.secret_hash)) {
    throw new Refusal(401, "the key is not valid")
  }
  if (row.revoked_at !== null) throw new Refusal(401, "the key has been revoked")
  if (row.expires_at.getTime() <= Date.now()) throw new Refusal(401, "the key has expired")
  if (row.partners.length === 0) {
    throw new Refusal(401, "the key's creator is no longer owner or admin of any operator on the key")
  }

  const { rows: [hit] } = await pool.query(RATE_LIMIT_HIT, [
    `partner:${row.id}`,
    WINDOW_SECONDS,
    WINDOW_SECONDS,
    WINDOW_SECONDS
  ])
  const remaining = Math.max(0, RATE_LIMIT - hit.count)
  const reset = Math.max(1, hit.reset_seconds)
  Object.assign(headers, {
    "ratelimit-policy": `"default";q=${RATE_LIMIT};w=${WINDOW_SECONDS}`,
    "ratelimit": `"default";r=${remaining};t=${reset}`,
    "ratelimit-limit": String(RATE_LIMIT),
    "ratelimit-remaining": String(remaining),
    "ratelimit-reset": String(reset),
    "cache-control": "private, no-store"
  })
  if (hit.count > RATE_LIMIT) throw new Refusal(429, "rate limited", { "retry-after": String(reset) })
  if (!row.scopes.includes(scope)) throw new Refusal(403, `this key lacks the scope ${scope}`)
  return { id: row.id, scopes: row.scopes, partners: row.partners }
}

const operatorIdsFor = (key: Key, partnerId: string | null) => {
  if (partnerId === null) return key.partners.map((p) => p.id)
  if (!key.partners.some((p) => p.id === partnerId)) {
    throw new Refusal(404, "partner_id is not one of this key's operators (not found, or not yours)")
  }
  return [partnerId]
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const STATUS = new Set(Object.keys(STORED_STATUSES))
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const optional = (params: URLSearchParams, name: string) => params.get(name) ?? undefined

const list = async (key: Key, params: URLSearchParams) => {
  const limitText = params.get("limit")
  if (limitText !== null && (!/^\d{1,9}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 100)) {
    throw new Refusal(400, "limit: must be a whole number from 1 to 100")
  }
  const dateFrom = optional(params, "date_from")
  const dateTo = optional(params, "date_to")
  const updatedSince = optional(params, "updated_since")
  const status = optional(params, "status")
  const cursor = optional(params, "cursor")
  const partnerId = optional(params, "partner_id")
  if ((dateFrom && !DAY.test(dateFrom)) || (dateTo && !DAY.test(dateTo))) {
    throw new Refusal(400, "must be a date YYYY-MM-DD")
  }
  if (updatedSince && Number.isNaN(Date.parse(updatedSince))) {
    throw new Refusal(400, "updated_since: must be a date-time")
  }
  if (status && !STATUS.has(status)) throw new Refusal(400, "status: unknown")
  if (dateFrom && dateTo && dateFrom > dateTo) throw new Refusal(400, "date_from must not be after date_to")

  const operatorIds = operatorIdsFor(key, partnerId ?? null)
  // As the service's handler: the cursor is bound to the instant, not its spelling.
  const filters = {
    date_from: dateFrom,
    date_to: dateTo,
    updated_since: updatedSince === undefined ? undefined : new Date(updatedSince).toISOString(),
    status,
    partner_id: partnerId
  }
  const fingerprint = filterFingerprint(filters)
  let after: CursorPosition | undefined
  if (cursor !== undefined) {
    const decoded = decodeCursor(cursorSecret!, cursor, fingerprint)
    if (Either.isLeft(decoded)) throw new Refusal(400, `cursor ${decoded.left}`)
    after = decoded.right
  }
  const limit = limitText === null ? 50 : Number(limitText)
  const statement = listStatement({
    operatorIds,
    limit,
    after,
    dateFrom,
    dateTo,
    updatedSince,
    status: status as ListQuery["status"]
  })
  const { rows } = await pool.query(statement.text, statement.values)
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const contact = key.scopes.includes("guests.contact:read")
  return {
    data: page.map((row) => summary(row, contact)),
    next_cursor: rows.length > limit && last
      ? encodeCursor(cursorSecret!, { createdMicros: last.created_micros, id: last.id }, fingerprint)
      : null
  }
}

const get = async (key: Key, id: string, params: URLSearchParams) => {
  if (!UUID.test(id)) throw new Refusal(400, "id: must be a UUID")
  const operatorIds = operatorIdsFor(key, params.get("partner_id"))
  const { rows: [row] } = await pool.query(GET_STATEMENT, [id, toPgArray(operatorIds)])
  if (!row) throw new Refusal(404, "booking not found, or not yours")
  return detail(row, key.scopes.includes("guests.contact:read"))
}

const manifest = async (key: Key, params: URLSearchParams) => {
  const date = params.get("date")
  if (date === null || !DAY.test(date)) throw new Refusal(400, "date: is required: the local departure day YYYY-MM-DD")
  const operatorIds = operatorIdsFor(key, params.get("partner_id"))
  const contact = key.scopes.includes("guests.contact:read")
  const operators = toPgArray(operatorIds)
  const { rows } = await pool.query(contact ? MANIFEST_WITH_CONTACT : MANIFEST_WITHOUT_CONTACT, [
    operators,
    date,
    operatorIds[0],
    operators,
    date
  ])
  const first = rows[0]
  if (!first) throw new Error("operator of the key not found")
  const entries: Array<ManifestEntry> = []
  for (const row of rows) if (row.id !== null) entries.push(manifestEntry(row, contact))
  return buildManifest({ date, timezone: first.day_timezone, synced_at: iso(first.day_synced_at) }, entries)
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** The check-in body as the service's CheckinRequest schema accepts it. */
const checkinChange = (text: string): CheckinChange => {
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    throw new Refusal(400, "the body must be JSON")
  }
  const status = body?.status
  const present = body?.present ?? undefined
  if (status !== "checked_in" && status !== "no_show" && status !== "clear") {
    throw new Refusal(400, "status: must be checked_in, no_show or clear")
  }
  if (present !== undefined && (!Number.isInteger(present) || present < 0)) {
    throw new Refusal(400, "present: must be a whole number from 0 to the row's participants")
  }
  if (present !== undefined && status !== "checked_in") throw new Refusal(400, "present: only with status checked_in")
  return status === "checked_in" ? (present === undefined ? { status } : { status, present }) : { status }
}

/** The bare check-in: lock the row, decide with the service's rule, write, in one transaction. */
const checkin = async (key: Key, rowId: string, text: string) => {
  if (!UUID.test(rowId)) throw new Refusal(400, "id: must be a UUID")
  const change = checkinChange(text)
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const { rows: [row] } = await client.query(CHECKIN_TARGET, [rowId, toPgArray(key.partners.map((p) => p.id))])
    if (!row) throw new Refusal(404, "manifest row not found, or not yours")
    const decision = decideCheckin({
      rowStatus: row.status,
      participants: row.participants,
      current: row.checkin_status === null ? null : { status: row.checkin_status, present: row.present }
    }, change)
    if (Either.isLeft(decision)) {
      throw new Refusal(decision.left._tag === "NotPossible" ? 422 : 400, decision.left.detail)
    }
    const { next, noop } = decision.right
    if (!noop) {
      if (next === null) await client.query(CHECKIN_CLEAR, [rowId])
      else await client.query(CHECKIN_UPSERT, [rowId, next.status, next.present, key.id])
    }
    await client.query("COMMIT")
    return { id: row.id, check_in: { status: next?.status ?? null, present: next?.present ?? null } }
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

// ---- the tour catalogue with a publishable key ---------------------------------------------------

/** src/partner/auth/PublishableKeysRepo.ts findKey (PublishableKeys.authenticate) */
const FIND_PUBLISHABLE_KEY = `
          SELECT id, site_id, allowed_origins, revoked_at FROM publishable_keys WHERE id = $1`

/** src/partner/tours/ToursRepo.ts offered (one tour, by id: $4), as @effect/sql compiles `sql.and` of its clauses. */
const offered = (siteParam: string) => `
        SELECT DISTINCT ON (t.id) t.id AS tour_id, s.owner_operator_id AS host_id,
          CASE st.sold_by WHEN 'site_owner' THEN s.owner_operator_id ELSE t.operator_id END AS seller_id
        FROM site_tours st
        JOIN sites s ON s.id = st.site_id
        JOIN tours t ON t.id = st.tour_id
        WHERE (st.site_id = ANY(${siteParam}::uuid[]) AND t.status = 'published' AND t.id = $4::uuid)
        ORDER BY t.id, (s.owner_operator_id = t.operator_id) DESC, s.domain`

/** ToursRepo.ts summaryColumns, the locale as parameter $1. */
const TOUR_SUMMARY_COLUMNS = `
      t.id, t.slug, coalesce(tr.title, t.title) AS title, coalesce(tr.excerpt, t.excerpt) AS excerpt,
      ARRAY(SELECT p.url FROM tour_photos p WHERE p.tour_id = t.id ORDER BY p.position) AS photos,
      t.duration_minutes, t.priced_per_booking, t.languages, t.rating_average::float8 AS rating_average, t.rating_count,
      c.from_price_minor, c.from_price_currency, c.known AS season_known, c.next_available_date,
      t.operator_id, o.name AS operator_name, o.legal_name AS operator_legal_name, o.org_number AS operator_org_number,
      f.host_id, f.seller_id, sel.name AS seller_name, sel.legal_name AS seller_legal_name,
      sel.org_number AS seller_org_number,
      CASE WHEN tr.tour_id IS NULL THEN 'en' ELSE $1 END AS applied_locale,
      (extract(epoch FROM t.created_at) * 1000000)::bigint::text AS created_micros`

/** ToursRepo.ts joins, the locale as parameter `localeParam`. */
const tourJoins = (localeParam: string) => `
      JOIN tours t ON t.id = f.tour_id
      JOIN operators o ON o.id = t.operator_id
      JOIN operators sel ON sel.id = f.seller_id
      LEFT JOIN tour_translations tr ON tr.tour_id = t.id AND tr.locale = ${localeParam}
      LEFT JOIN tour_season_cache c ON c.tour_id = t.id`

/**
 * Tours.list: the page's tour ids first (keyset), then the site each is shown as sold on and the
 * content for those ids only. `after` is the keyset clause with its parameters, `next` the number
 * of the parameter after them: first page $1 locale, $2 sites, $3 limit + 1, $4 sites, $5 locale;
 * after a position $3 created_at and $4 id come before, the rest shift by two.
 */
const tourList = (after: string, next: number) => `
          SELECT ${TOUR_SUMMARY_COLUMNS}
          FROM (
            SELECT t.id, t.operator_id, t.created_at FROM tours t
            WHERE (t.status = 'published' AND EXISTS (SELECT 1 FROM site_tours st WHERE st.tour_id = t.id AND st.site_id = ANY($2::uuid[]))${after})
            ORDER BY t.created_at, t.id
            LIMIT $${next}
          ) pt
          CROSS JOIN LATERAL (
            SELECT st.tour_id, s.owner_operator_id AS host_id,
              CASE st.sold_by WHEN 'site_owner' THEN s.owner_operator_id ELSE pt.operator_id END AS seller_id
            FROM site_tours st
            JOIN sites s ON s.id = st.site_id
            WHERE st.tour_id = pt.id AND st.site_id = ANY($${next + 1}::uuid[])
            ORDER BY (s.owner_operator_id = pt.operator_id) DESC, s.domain
            LIMIT 1
          ) f
          ${tourJoins(`$${next + 2}`)}
          ORDER BY t.created_at, t.id`
const TOUR_LIST_FIRST = tourList("", 3)
const TOUR_LIST_AFTER = tourList(" AND (t.created_at, t.id) > ($3::timestamptz, $4::uuid)", 5)

/** Tours.get: $1 locale, $2 sites (linked products), $3 sites, $4 id, $5 locale. */
const TOUR_GET = `
          SELECT ${TOUR_SUMMARY_COLUMNS}, t.timezone,
            coalesce(tr.description_html, t.description_html) AS description_html,
            coalesce(tr.included_html, t.included_html) AS included_html,
            coalesce(tr.excluded_html, t.excluded_html) AS excluded_html,
            coalesce(tr.inclusions, t.inclusions) AS inclusions,
            coalesce(tr.exclusions, t.exclusions) AS exclusions,
            coalesce(tr.highlights, t.highlights) AS highlights,
            coalesce(tr.know_before, t.know_before) AS know_before,
            CASE WHEN t.meeting_point_name IS NULL THEN NULL
              ELSE coalesce(tr.meeting_point_name, t.meeting_point_name) END AS meeting_point_name,
            t.meeting_point_address, t.meeting_point_lat, t.meeting_point_lng,
            coalesce(tr.cancellation_title, t.cancellation_title) AS cancellation_title,
            t.cancellation_free_hours, t.min_age, t.difficulty, t.departure_times,
            (SELECT coalesce(json_agg(json_build_object(
                'id', pc.id, 'is_default', pc.is_default, 'title', coalesce(pct.title, pc.title),
                'min_age', pc.min_age, 'max_age', pc.max_age) ORDER BY pc.position, pc.id), '[]')
              FROM tour_pricing_categories pc
              LEFT JOIN tour_pricing_category_translations pct
                ON pct.tour_id = pc.tour_id AND pct.category_id = pc.id AND pct.locale = tr.locale
              WHERE pc.tour_id = t.id) AS pricing_categories,
            (SELECT coalesce(json_agg(json_build_object(
                'id', r.id, 'title', coalesce(rt.title, r.title), 'description', coalesce(rt.description, r.description))
                ORDER BY r.position, r.id), '[]')
              FROM tour_rates r
              LEFT JOIN tour_rate_translations rt ON rt.tour_id = r.tour_id AND rt.rate_id = r.id AND rt.locale = tr.locale
              WHERE r.tour_id = t.id) AS rates,
            (SELECT coalesce(json_agg(json_build_object(
                'label', l.label, 'language', l.language,
                'tour_id', CASE WHEN EXISTS (
                  SELECT 1 FROM site_tours lst JOIN tours lt ON lt.id = lst.tour_id
                  WHERE lst.tour_id = l.linked_tour_id AND lt.status = 'published'
                    AND lst.site_id = ANY($2::uuid[])
                ) THEN l.linked_tour_id END) ORDER BY l.position), '[]')
              FROM tour_linked_products l WHERE l.tour_id = t.id) AS linked_products
          FROM (${offered("$3")}) f
          ${tourJoins("$5")}`

/** The answers held for publishable keys, as PublicCatalogueCache (bounded the same way). */
const held = new Map<string, { readonly body: string; readonly expires: number }>()
const HELD_MAX = 20_000

const LOCALE = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8}){0,4}$/
const TOUR = /^\/api\/v1\/tours\/([^/]+)$/
const TOUR_FILTERS = { list: "tours", partner_id: undefined }

/** GET /tours and /tours/{id} for a publishable key; undefined when the path is not one of them. */
const tours = async (req: IncomingMessage, url: URL, res: ServerResponse, headers: Record<string, string>) => {
  const one = TOUR.exec(url.pathname)
  if (url.pathname !== "/api/v1/tours" && !one) return false
  if ((req.headers.authorization ?? "") !== "") throw new Refusal(400, "the floor serves publishable keys only")
  const keys = url.searchParams.getAll("key")
  if (keys.length !== 1) throw new Refusal(401, "send one `key`")
  const id = parsePublishableKey(keys[0]!)
  if (id === undefined) throw new Refusal(401, "the publishable key is malformed")
  const { rows: [key] } = await pool.query(FIND_PUBLISHABLE_KEY, [id])
  if (!key) throw new Refusal(401, "the publishable key is not valid")
  if (key.revoked_at !== null) throw new Refusal(401, "the publishable key has been revoked")
  Object.assign(headers, { "cache-control": "no-store", "vary": "Origin" })
  const kind = one ? "detail" : "list"
  const cacheKey = publicCacheKey(key.id, req.url ?? "/")
  const entry = held.get(cacheKey)
  const now = Date.now()
  if (entry !== undefined && entry.expires > now) {
    send(
      res,
      200,
      undefined,
      { ...headers, "cache-control": PUBLIC_CACHE_CONTROL[kind], "x-cache": "HIT" },
      "application/json",
      entry.body
    )
    return true
  }
  if (entry !== undefined) held.delete(cacheKey)
  const { rows: [hit] } = await pool.query(RATE_LIMIT_HIT, [
    `publishable:${key.id}`,
    WINDOW_SECONDS,
    WINDOW_SECONDS,
    WINDOW_SECONDS
  ])
  const remaining = Math.max(0, PUBLISHABLE_RATE_LIMIT - hit.count)
  const reset = Math.max(1, hit.reset_seconds)
  Object.assign(headers, {
    "ratelimit-policy": `"publishable";q=${PUBLISHABLE_RATE_LIMIT};w=${WINDOW_SECONDS}`,
    "ratelimit": `"publishable";r=${remaining};t=${reset}`,
    "ratelimit-limit": String(PUBLISHABLE_RATE_LIMIT),
    "ratelimit-remaining": String(remaining),
    "ratelimit-reset": String(reset)
  })
  if (hit.count > PUBLISHABLE_RATE_LIMIT) throw new Refusal(429, "rate limited", { "retry-after": String(reset) })
  const localeText = url.searchParams.get("locale")
  if (localeText !== null && (!LOCALE.test(localeText) || localeText.length > 35)) {
    throw new Refusal(400, "locale: must be a language tag")
  }
  if (url.searchParams.has("partner_id")) throw new Refusal(400, "partner_id is for secret keys")
  const locale = catalogueLocale(localeText ?? undefined)
  const sites = toPgArray([key.site_id])
  let body: unknown
  if (one) {
    if (!UUID.test(one[1]!)) throw new Refusal(400, "id: must be a UUID")
    const { rows: [row] } = await pool.query(TOUR_GET, [locale, sites, sites, one[1], locale])
    if (!row) throw new Refusal(404, "tour not found, or not yours")
    body = toTourDetail(row)
  } else {
    const limitText = url.searchParams.get("limit")
    if (
      limitText !== null && (!/^\d{1,9}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > TOUR_LIST_MAX)
    ) {
      throw new Refusal(400, `limit: must be a whole number from 1 to ${TOUR_LIST_MAX}`)
    }
    const limit = limitText === null ? TOUR_LIST_DEFAULT : Number(limitText)
    const fingerprint = filterFingerprint(TOUR_FILTERS)
    const cursor = url.searchParams.get("cursor")
    let rows: Array<Row>
    if (cursor === null) {
      rows = (await pool.query(TOUR_LIST_FIRST, [locale, sites, limit + 1, sites, locale])).rows
    } else {
      const decoded = decodeCursor(cursorSecret!, cursor, fingerprint)
      if (Either.isLeft(decoded)) throw new Refusal(400, `cursor ${decoded.left}`)
      const after = decoded.right
      rows = (await pool.query(TOUR_LIST_AFTER, [
        locale,
        sites,
        microsToIso(after.createdMicros),
        after.id,
        limit + 1,
        sites,
        locale
      ])).rows
    }
    const shown = rows.slice(0, limit)
    const last = shown[shown.length - 1]
    body = {
      data: shown.map((row) => toTourSummary(row as Parameters<typeof toTourSummary>[0])),
      next_cursor: rows.length > limit && last
        ? encodeCursor(cursorSecret!, { createdMicros: last.created_micros, id: last.id }, fingerprint)
        : null
    }
  }
  const text = JSON.stringify(body)
  held.delete(cacheKey)
  held.set(cacheKey, { body: text, expires: now + PUBLIC_TTL_SECONDS[kind] * 1000 })
  while (held.size > HELD_MAX) held.delete(held.keys().next().value!)
  send(
    res,
    200,
    undefined,
    { ...headers, "cache-control": PUBLIC_CACHE_CONTROL[kind], "x-cache": "MISS" },
    "application/json",
    text
  )
  return true
}

// ---- the sales summary (src/partner/sales/SalesRepo.ts, src/rates/DailyRatesRepo.ts, verbatim) ------------

const SALES_OWN_DAYS = `
        SELECT day, currency, operator_id, bookings, revenue_minor
        FROM sales_own_day_totals
        WHERE operator_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
        ORDER BY day, operator_id, currency`

const SALES_CHANNEL_DAYS = `
        SELECT day, channel_label AS label, currency, sum(bookings)::int8 AS bookings,
          sum(participants)::int8 AS participants, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_channel_day_totals
        WHERE operator_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
        GROUP BY day, channel_label, currency`

const SALES_COVERAGE = `
        SELECT o.booking_system_account_id AS account_id, array_agg(o.id::text ORDER BY o.name) AS operator_ids,
          a.covered_from, a.covered_until, a.last_outcome, a.last_attempt_at
        FROM operators o
        LEFT JOIN sales_ledger_accounts a ON a.account_id = o.booking_system_account_id
        WHERE o.id = ANY($1::uuid[]) AND o.booking_system_account_id IS NOT NULL
        GROUP BY o.booking_system_account_id, a.covered_from, a.covered_until, a.last_outcome, a.last_attempt_at`

/** DailyRatesRepo.range with a list of currencies (`sql.in`: `($3,$4…)`). */
const ratesStatement = (currencies: number) => `
          SELECT currency, day::text AS day, nok_per_unit::text AS "nokPerUnit", source
          FROM exchange_rates
          WHERE day BETWEEN $1::date AND $2::date
            AND currency IN (${Array.from({ length: currencies }, (_, i) => `$${i + 3}`).join(",")})
          ORDER BY currency, day`

const SALES_STALE_AFTER_MS = Number(process.env.SALES_LEDGER_STALE_AFTER_MINUTES ?? 30) * 60_000

const salesSummary = async (key: Key, params: URLSearchParams) => {
  for (const name of ["from", "to"]) {
    const value = params.get(name)
    if (value === null) throw new Refusal(400, `${name} is required`)
    if (!DAY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
      throw new Refusal(400, `${name} must be a day YYYY-MM-DD`)
    }
  }
  const from = params.get("from")!
  const to = params.get("to")!
  const currencyText = params.get("currency") ?? "NOK"
  if (!(salesRules.SALES_CURRENCIES as ReadonlyArray<string>).includes(currencyText)) {
    throw new Refusal(400, "currency must be one of NOK, EUR")
  }
  const currency = currencyText as salesRules.SalesCurrency
  const range = salesRules.checkSalesRange(from, to)
  if (Either.isLeft(range)) throw new Refusal(400, `${range.left.field} ${range.left.detail}`)
  const operatorIds = operatorIdsFor(key, params.get("partner_id"))
  const partners = key.partners.filter((p) => operatorIds.includes(p.id))
  const ids = toPgArray(operatorIds)
  const [own, channelRows, accounts] = await Promise.all([
    pool.query(SALES_OWN_DAYS, [ids, from, to]).then((r) => r.rows as Array<salesRules.OwnDayRow>),
    pool.query(SALES_CHANNEL_DAYS, [ids, from, to]).then((r) => r.rows as Array<salesRules.ChannelDayRow>),
    pool.query(SALES_COVERAGE, [ids]).then((r) => r.rows as Array<salesRules.LedgerCoverage>)
  ])
  const gaps = salesRules.ledgerGaps(accounts, { from, to }, new Date(), SALES_STALE_AFTER_MS)
  const foreign = gaps.length === 0 ? salesRules.foreignCurrencies(channelRows, currency) : []
  // DailyRates.table: NOK needs no row; the rates of [from − lookback, to].
  const wanted = [...new Set([...foreign, currency])].filter((c) => c !== "NOK")
  let table: ReturnType<typeof makeRateTable> | null = null
  if (foreign.length > 0) {
    const { rows } = wanted.length === 0
      ? { rows: [] }
      : await pool.query(ratesStatement(wanted.length), [addDays(from, -DEFAULT_LOOKBACK_DAYS), to, ...wanted])
    table = makeRateTable(
      rows.map((r) => ({ currency: r.currency, day: r.day, nokPerUnit: Number(r.nokPerUnit) })),
      DEFAULT_LOOKBACK_DAYS
    )
  }
  return salesRules.salesSummaryJson({ from, to, currency, partners, own, channelRows, accounts, gaps, table })
}

const BOOKING = /^\/api\/v1\/bookings\/([^/]+)$/
const CHECKIN = /^\/api\/v1\/manifest\/([^/]+)\/checkin$/

// ---- GET /api/v1/analytics/tours and /analytics/sites (`npm run bench:analytics`) ----------------
// The statements of src/partner/analytics/AnalyticsRepo.ts (and SalesRepo.coverage, DailyRatesRepo.range)
// as @effect/sql compiles them, in one transaction with the limits of AnalyticsLimits.ts (the
// statement timeout set before each statement, a slot of the key taken first); the answer built by the
// service's pure rules (src/partner/analytics/rules.ts, ledgerGaps, makeRateTable, converterTo) in
// Analytics.ts's order. The failures the service maps (429 for a full key, 503 past the deadline or a
// missing rate) are left out: the bench never meets them.

const ANALYTICS_TIMEOUT_MS = Number(process.env.ANALYTICS_TIMEOUT_MS ?? 20_000)
const ANALYTICS_SLOTS = Number(process.env.ANALYTICS_CONCURRENCY_PER_KEY ?? 2)
const LEDGER_STALE_AFTER_MS = Number(process.env.SALES_LEDGER_STALE_AFTER_MINUTES ?? 30) * 60_000
const ANALYTICS_IDLE_MS = ANALYTICS_TIMEOUT_MS + 10_000

const LIMIT_STATEMENTS = `SELECT set_config('statement_timeout', $1, true),
        set_config('idle_in_transaction_session_timeout', $2, true)`
const TAKE_SLOT = `
          SELECT s AS slot FROM generate_series(0, $1) AS s
          WHERE pg_try_advisory_xact_lock(hashtextextended($2 || s, 0))
          LIMIT 1`
const VISIBLE_SITES = (domain: boolean) => `
        SELECT s.id, s.domain, s.name, s.owner_operator_id = ANY($1::uuid[]) AS owner
        FROM sites s
        WHERE (s.owner_operator_id = ANY($2::uuid[]) OR EXISTS (
            SELECT 1 FROM site_operators so WHERE so.site_id = s.id AND so.operator_id = ANY($3::uuid[])))
          ${domain ? "AND s.domain = $4" : ""}
        ORDER BY s.domain`
const SITES_BY_IDS = `SELECT id, domain, name FROM sites WHERE id = ANY($1::uuid[])`
const TRAFFIC = `
        SELECT site_id, day, visitors, new_visitors, sessions, pageviews, bounces, duration_seconds
        FROM analytics_site_daily
        WHERE site_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
        ORDER BY site_id, day`
const SOURCES = `
        SELECT site_id, dimension, label, visitors, conversions, revenue_eur_minor FROM (
          SELECT site_id, dimension, label, sum(visitors)::int8 AS visitors, sum(conversions)::int8 AS conversions,
            sum(revenue_eur_minor)::int8 AS revenue_eur_minor,
            row_number() OVER (PARTITION BY site_id, dimension ORDER BY sum(visitors) DESC, label) AS rank
          FROM analytics_source_daily
          WHERE site_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
          GROUP BY site_id, dimension, label
        ) ranked
        WHERE rank <= $4`
const SITE_FUNNELS = `
        SELECT site_id, sum(views)::int8 AS views, sum(availability_checks)::int8 AS availability_checks,
          sum(checkout_opens)::int8 AS checkout_opens, sum(checkout_attempts)::int8 AS checkout_attempts
        FROM analytics_tour_daily
        WHERE site_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
        GROUP BY site_id`
const SITE_DAY_SALES = `
        SELECT site_id, day, currency, sum(bookings)::int8 AS bookings, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_own_daily
        WHERE source = 'checkout' AND day BETWEEN $1::date AND $2::date
          AND (site_id = ANY($3::uuid[])
            OR (site_id = ANY($4::uuid[]) AND operator_id = ANY($5::uuid[])))
        GROUP BY site_id, day, currency`
/** The tour statements without `tour_id` or `surface` (the bench asks for neither). */
const TOUR_FUNNELS = (total: boolean) => {
  const p = (n: number) => `$${total ? n + 1 : n}`
  return `
        SELECT d.site_id, d.tour_id, t.operator_id, ${total ? "$1::date" : "d.day"} AS day,
          sum(d.views)::int8 AS views, sum(d.availability_checks)::int8 AS availability_checks,
          sum(d.checkout_opens)::int8 AS checkout_opens, sum(d.checkout_attempts)::int8 AS checkout_attempts
        FROM analytics_tour_daily d
        LEFT JOIN tours t ON t.id = d.tour_id
        WHERE d.day BETWEEN ${p(1)}::date AND ${p(2)}::date
          AND (d.tour_id = ANY(ARRAY(SELECT id FROM tours WHERE operator_id = ANY(${p(3)}::uuid[])))
            OR d.site_id = ANY(${p(4)}::uuid[]))
        GROUP BY 1, 2, 3, 4`
}
const TOUR_SITE_SALES = `
        SELECT site_id, tour_id, operator_id, day, currency, sum(bookings)::int8 AS bookings,
          sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_own_daily
        WHERE source = 'checkout' AND site_id IS NOT NULL AND day BETWEEN $1::date AND $2::date
          AND (operator_id = ANY($3::uuid[]) OR site_id = ANY($4::uuid[]))
        GROUP BY site_id, tour_id, operator_id, day, currency`
const TOUR_CHANNEL_SALES = `
        SELECT tour_id, operator_id, channel_label AS label, day, currency, sum(bookings)::int8 AS bookings,
          sum(participants)::int8 AS participants, sum(revenue_minor)::int8 AS revenue_minor
        FROM sales_channel_daily
        WHERE operator_id = ANY($1::uuid[]) AND day BETWEEN $2::date AND $3::date
        GROUP BY tour_id, operator_id, channel_label, day, currency`
const TOURS_BY_IDS = `SELECT id, title, operator_id FROM tours WHERE id = ANY($1::uuid[])`
const OPERATORS_BY_IDS = `SELECT id, name FROM operators WHERE id = ANY($1::uuid[])`
// SalesRepo.coverage and DailyRatesRepo.range: SALES_COVERAGE and ratesStatement above.

/** AnalyticsLimits.run: one transaction, the timeout, a slot of the key; `step` runs a statement in the deadline. */
const withAnalyticsLimits = async <A>(
  keyId: string,
  body: (step: <R = any>(text: string, values: Array<unknown>) => Promise<Array<R>>) => Promise<A>
): Promise<A> => {
  const client = await pool.connect()
  try {
    await client.query("BEGIN")
    const deadline = Date.now() + ANALYTICS_TIMEOUT_MS
    await client.query(LIMIT_STATEMENTS, [String(ANALYTICS_TIMEOUT_MS), String(ANALYTICS_IDLE_MS)])
    const { rows: [slot] } = await client.query(TAKE_SLOT, [ANALYTICS_SLOTS - 1, `analytics-slot:${keyId}:`])
    if (!slot) throw new Refusal(429, "this key's analytics slots are taken", { "retry-after": "1" })
    const step = async <R>(text: string, values: Array<unknown>): Promise<Array<R>> => {
      const left = deadline - Date.now()
      if (left < 1) throw new Refusal(503, "the analytics read took too long")
      await client.query(LIMIT_STATEMENTS, [String(left), String(ANALYTICS_IDLE_MS)])
      return (await client.query(text, values)).rows as Array<R>
    }
    const result = await body(step)
    await client.query("COMMIT")
    return result
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

type Step = Parameters<Parameters<typeof withAnalyticsLimits>[1]>[0]

/** Analytics.toEurFor */
const toEurFor = async (step: Step, currencies: ReadonlyArray<string>, from: string, to: string) => {
  const foreign = [...new Set(currencies)].filter((c) => c !== "EUR")
  let table: ReturnType<typeof makeRateTable> | null = null
  if (foreign.length > 0) {
    // DailyRates.table: NOK needs no row.
    const asked = [...new Set([...foreign, "EUR"].map((c) => c.trim().toUpperCase()))].filter((c) => c !== "NOK")
    const rows = asked.length === 0 ? [] : await step<{ currency: string; day: string; nokPerUnit: string }>(
      ratesStatement(asked.length),
      [addDays(from, -DEFAULT_LOOKBACK_DAYS), to, ...asked]
    )
    table = makeRateTable(rows.map((r) => ({ ...r, nokPerUnit: Number(r.nokPerUnit) })), DEFAULT_LOOKBACK_DAYS)
  }
  const toEur = table && converterTo(table, "EUR")
  return (amount: number, currency: string, day: string) =>
    currency === "EUR" ? amount : toEur && toEur(amount, currency, day)
}

const analyticsRange = (key: Key, params: URLSearchParams) => {
  const from = params.get("from") ?? ""
  const to = params.get("to") ?? ""
  if (!DAY.test(from) || !DAY.test(to)) throw new Refusal(400, "from and to must be days")
  const range = checkAnalyticsRange(from, to)
  if (Either.isLeft(range)) throw new Refusal(400, range.left.detail)
  const operatorIds = operatorIdsFor(key, params.get("partner_id"))
  return { from, to, operatorIds, partners: key.partners.filter((p) => operatorIds.includes(p.id)) }
}

/** Analytics.sites (no `site`). */
const analyticsSites = (key: Key, params: URLSearchParams) => {
  const { from, to, operatorIds, partners: _ } = analyticsRange(key, params)
  if (params.get("site") !== null) throw new Refusal(400, "the floor does not take site")
  const ops = toPgArray(operatorIds)
  return withAnalyticsLimits(key.id, async (step) => {
    const visible = await step<siteRules.VisibleSite>(VISIBLE_SITES(false), [ops, ops, ops])
    if (visible.length === 0) return { from, to, currency: "EUR", sites: [] }
    const ids = toPgArray(visible.map((s) => s.id))
    const owned = visible.filter((s) => s.owner).map((s) => s.id)
    const traffic = await step<siteRules.TrafficDayRow>(TRAFFIC, [ids, from, to])
    const sources = await step<siteRules.SourceRow>(SOURCES, [ids, from, to, analytics.SOURCES_PER_DIMENSION])
    const funnels = owned.length === 0 ? [] : await step<siteRules.SiteFunnelRow>(SITE_FUNNELS, [
      toPgArray(owned),
      from,
      to
    ])
    const sales = await step<siteRules.SiteDaySalesRow>(SITE_DAY_SALES, [
      from,
      to,
      toPgArray(owned),
      toPgArray(visible.filter((s) => !s.owner).map((s) => s.id)),
      ops
    ])
    const toEur = await toEurFor(step, sales.map((s) => s.currency), from, to)
    const items = Either.getOrThrowWith(
      siteRules.siteItems({ visible, traffic, sources, funnels, sales, toEur }),
      () => new Error("a rate is missing")
    )
    return { from, to, currency: "EUR", sites: items }
  })
}

/** Analytics.tours (no `tour_id`, no `surface`). */
const analyticsTours = (key: Key, params: URLSearchParams) => {
  const { from, to, operatorIds, partners } = analyticsRange(key, params)
  if (params.get("tour_id") !== null || params.get("surface") !== null) {
    throw new Refusal(400, "the floor takes neither tour_id nor surface")
  }
  const granularity = (params.get("granularity") ?? "day") as analytics.Granularity
  if (!analytics.GRANULARITIES.includes(granularity)) throw new Refusal(400, "granularity is day or total")
  const total = granularity === "total"
  const ops = toPgArray(operatorIds)
  return withAnalyticsLimits(key.id, async (step) => {
    const owned = (await step<siteRules.VisibleSite>(VISIBLE_SITES(false), [ops, ops, ops])).filter((s) => s.owner)
    const ownedIds = toPgArray(owned.map((s) => s.id))
    const funnels = await step<analytics.FunnelRow>(
      TOUR_FUNNELS(total),
      total ? [from, from, to, ops, ownedIds] : [from, to, ops, ownedIds]
    )
    const siteSales = await step<analytics.SiteSalesRow>(TOUR_SITE_SALES, [from, to, ops, ownedIds])
    const accounts = await step<salesRules.LedgerCoverage>(SALES_COVERAGE, [ops])
    const channelsAvailable =
      salesRules.ledgerGaps(accounts, { from, to }, new Date(), LEDGER_STALE_AFTER_MS).length === 0
    let channelSales = !channelsAvailable
      ? []
      : await step<analytics.ChannelSalesRow>(TOUR_CHANNEL_SALES, [ops, from, to])
    const toEur = await toEurFor(step, [...siteSales, ...channelSales].map((s) => s.currency), from, to)
    let otherChannelsAvailable = channelsAvailable
    if (channelSales.some((c) => toEur(c.revenue_minor, c.currency, c.day) === null)) {
      channelSales = []
      otherChannelsAvailable = false
    }
    const tourIds = [...new Set([...funnels, ...siteSales, ...channelSales].flatMap((x) => x.tour_id ?? []))]
    const tourList = tourIds.length === 0
      ? []
      : await step<{ id: string; title: string; operator_id: string }>(TOURS_BY_IDS, [toPgArray(tourIds)])
    const tourById = new Map(tourList.map((t) => [t.id, { name: t.title, operatorId: t.operator_id }]))
    const siteIds = [...new Set([...funnels, ...siteSales].map((x) => x.site_id))]
    const siteList = siteIds.length === 0
      ? []
      : await step<{ id: string; domain: string; name: string }>(SITES_BY_IDS, [toPgArray(siteIds)])
    const siteById = new Map(siteList.map((s) => [s.id, s]))
    const names = new Map(partners.map((p) => [p.id, p.name]))
    const unnamed = [
      ...new Set([
        ...tourList.map((t) => t.operator_id),
        ...siteSales.map((s) => s.operator_id),
        ...channelSales.map((s) => s.operator_id)
      ])
    ].filter((id) => !names.has(id))
    if (unnamed.length > 0) {
      for (const o of await step<{ id: string; name: string }>(OPERATORS_BY_IDS, [toPgArray(unnamed)])) {
        names.set(o.id, o.name)
      }
    }
    const figures = analytics.tourFigures({
      granularity,
      funnels,
      siteSales,
      channelSales,
      surfaceFilter: undefined,
      toEur,
      lookups: {
        inView: new Set(operatorIds),
        site: (id) => siteById.get(id),
        tour: (id) => tourById.get(id),
        operator: (id) => ({ id, name: names.get(id) ?? id })
      }
    })
    if (Either.isLeft(figures)) throw new Error("a rate is missing")
    return {
      from,
      to,
      granularity,
      currency: "EUR",
      partners: [...partners].sort((a, b) => a.name.localeCompare(b.name)),
      rows: figures.right.rows,
      surfaces: figures.right.surfaces,
      other_channels_available: otherChannelsAvailable
    }
  })
}

// GET /api/v1/finance/{payouts,chargebacks,pay-later,statements,invoices} (`npm run bench:finance`): bench/financeFloor.ts.
const finance = financeFloor({
  pool,
  cursorSecret: () => cursorSecret!,
  refuse: (status, detail) => {
    throw new Refusal(status, detail)
  },
  base: () => `http://127.0.0.1:${process.env.PORT ?? 3001}`
})

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  const requestId = randomUUID()
  const headers: Record<string, string> = { "x-request-id": requestId }
  try {
    // As the service's problem middleware: a URL carrying a secret key is refused first.
    if (urlCarriesSecretKey(req.url ?? "")) throw new Refusal(400, "a secret key must never be sent in the URL")
    const url = new URL(req.url ?? "/", "http://floor")
    const write = CHECKIN.exec(url.pathname)
    if (req.method === "POST" && write) {
      const text = await readBody(req)
      return send(res, 200, await checkin(await authenticate(req, headers, "checkins:write"), write[1]!, text), headers)
    }
    if (req.method !== "GET") throw new Refusal(404, "no such endpoint")
    if (url.pathname === "/healthz") return send(res, 200, { status: "ok" }, headers)
    if (await tours(req, url, res, headers)) return
    let body: unknown
    const financeRead = finance[url.pathname]
    if (financeRead !== undefined) {
      body = await financeRead(await authenticate(req, headers, "finance:read"), url.searchParams)
    } else if (url.pathname === "/api/v1/sales") {
      // The service's text (rules.salesSummaryJson), sent as it is.
      const text = await salesSummary(await authenticate(req, headers, "finance:read"), url.searchParams)
      return send(res, 200, undefined, headers, "application/json", text)
    } else if (url.pathname === "/api/v1/analytics/sites") {
      body = await analyticsSites(await authenticate(req, headers, "analytics:read"), url.searchParams)
    } else if (url.pathname === "/api/v1/analytics/tours") {
      body = await analyticsTours(await authenticate(req, headers, "analytics:read"), url.searchParams)
    } else if (url.pathname === "/api/v1/manifest") {
      body = await manifest(await authenticate(req, headers, "manifest:read"), url.searchParams)
    } else {
      const one = BOOKING.exec(url.pathname)
      if (url.pathname !== "/api/v1/bookings" && !one) throw new Refusal(404, `no endpoint GET ${url.pathname}`)
      const key = await authenticate(req, headers, "bookings:read")
      body = one ? await get(key, one[1]!, url.searchParams) : await list(key, url.searchParams)
    }
    send(res, 200, body, headers)
  } catch (error) {
    if (error instanceof Refusal) {
      send(res, error.status, { title: "refused", status: error.status, detail: error.detail, request_id: requestId }, {
        ...headers,
        ...error.headers
      }, "application/problem+json")
    } else {
      console.error(error)
      send(
        res,
        500,
        { title: "Internal error", status: 500, request_id: requestId },
        headers,
        "application/problem+json"
      )
    }
  }
}

const main = async () => {
  const { rows: [secret] } = await pool.query("SELECT value FROM service_secrets WHERE name = 'cursor'")
  if (!secret) throw new Error("service_secrets has no cursor secret; run the migrations")
  cursorSecret = secret.value
  const server = createServer((req, res) => void handle(req, res))
  const port = Number(process.env.PORT ?? 3001)
  server.listen(port, "127.0.0.1", () => console.log(`floor listening on http://127.0.0.1:${port}`))
  const stop = () => {
    server.close()
    server.closeAllConnections()
    void pool.end().finally(() => process.exit(0))
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
  process.stdin.on("end", stop)
  process.stdin.on("error", stop)
  process.stdin.resume()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
