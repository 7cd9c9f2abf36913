/**
 * The desk floor (`npm run bench:desk`): the cheapest server that does the service's work for the
 * three desk reads of the sale flow, so their cost can be compared with the service's:
 *
 *   GET /api/quickbook/v1/tours?date=D                    QuickbookTours.list
 *   GET /api/quickbook/v1/tours/{activityId}/slots?date=D QuickbookTours.slots
 *   GET /api/quickbook/v1/sales/{reference}/ticket        QuickbookTickets.ticket
 *
 * Bare node:http + a pg Pool of the same size and type parsers as the service, and per request the
 * service's statements, copied verbatim (checked against the service's by bench/sqlTrace.ts before
 * measuring):
 *   1. the key lookup of QuickbookKeys.authenticateKey (then the SHA-256 constant-time compare,
 *      revocation and expiry in JS), the terminal lookup of QuickbookKeys.terminalFor, and the
 *      rate-limit upsert of RateLimiterRepo.count (RateLimiter.hit) on the terminal's reads bucket (300 a minute);
 *   2. tours and slots: the sellable-tours statement of QuickbookToursRepo (all, or the one tour), then
 *      per tour the booking-system account (BookingSystemAccounts.byId) and **the same call to the
 *      booking system** the Bókun adapter makes (GET /activity.json/{id}/availabilities, signed the
 *      same way with the adapter's own `signedHeaders`), mapped by the adapter's own `departures`
 *      and turned into slots by the service's own `slotsOf`/`guestTypesOf`;
 *   3. ticket: the sale read of src/quickbook/tickets/QuickbookTicketsRepo.ts (scoped to the terminal), laid
 *      out by the service's own `ticketOf` with the same links (PUBLIC_URL and the ticket-link
 *      secret derived from service_secrets, as QuickbookTicketLinks does without
 *      QUICKBOOK_TICKET_LINK_SECRET).
 * What it leaves out is the service's machinery: Effect, HttpApi routing and Schema decoding and
 * encoding, spans, the adapter's timeouts, retries and Schema decoding of the sandbox's answer.
 *
 * Env: DATABASE_URL, PORT, DB_POOL_SIZE (default 10), PUBLIC_URL (as the service's).
 * Exits when its stdin closes (the runner holds the other end), so it never outlives the runner.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import pg from "pg"
import { departures } from "../src/adapters/bokun/mapping.js"
import { signedHeaders } from "../src/adapters/bokun/signing.js"
import { pgTypes } from "../src/db/pgTypes.js"
import { secretMatches } from "../src/partner/auth/apiKey.js"
import { QUICKBOOK_BUDGETS, QUICKBOOK_WINDOW_SECONDS, quickbookBucket } from "../src/quickbook/limits.js"
import { type Category, guestTypesOf, REFERENCE_PATTERN, slotsOf } from "../src/quickbook/sales/rules.js"
import { parseQuickbookKey, parseTerminalHeader, type QuickbookKeyMode } from "../src/quickbook/terminals/key.js"
import { sandboxMismatch } from "../src/quickbook/terminals/testKeys.js"
import { TICKET_PDF_PATH } from "../src/quickbook/tickets/QuickbookTicketLinks.js"
import { type TicketLanguage, ticketOf } from "../src/quickbook/tickets/ticket.js"
import { deriveTicketLinkSecret, signTicketLink } from "../src/quickbook/tickets/ticketLinkSignature.js"

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DB_POOL_SIZE ?? 10),
  application_name: "bench-floor",
  types: pgTypes
})
pool.on("error", () => {})

const PUBLIC_URL = (process.env.PUBLIC_URL ?? "").replace(/\/+$/, "")
if (PUBLIC_URL === "") {
  throw new Error("PUBLIC_URL must be set (the service's too), so both answer the same ticket links")
}

// ---- the statements, verbatim from the repositories (src/quickbook/*/…Repo.ts) ----------------------

/** QuickbookKeysRepo.keyById (QuickbookKeys.authenticateKey) */
const FIND_KEY = "SELECT id, mode, name, secret_hash, expires_at, revoked_at FROM quickbook_keys WHERE id = $1"

/** QuickbookKeysRepo.terminalForKey (QuickbookKeys.terminalFor) */
const FIND_TERMINAL = `
          SELECT t.id, t.name, t.operator_id, o.name AS operator_name, t.payment_terminal_id, t.deactivated_at, t.created_at,
            EXISTS (SELECT 1 FROM quickbook_key_terminals kt WHERE kt.key_id = $1 AND kt.terminal_id = t.id) AS bound
          FROM quickbook_terminals t JOIN operators o ON o.id = t.operator_id
          WHERE t.id = $2`

/** RateLimiterRepo.count (RateLimiter.hit) */
const RATE_LIMIT_HIT = `
        INSERT INTO rate_limit_counters AS c (bucket, window_start, count)
        VALUES ($1, to_timestamp(floor(extract(epoch FROM now()) / $2) * $3), 1)
        ON CONFLICT (bucket) DO UPDATE SET
          count = CASE WHEN c.window_start = excluded.window_start THEN c.count + 1 ELSE 1 END,
          window_start = excluded.window_start
        RETURNING count,
          ceil(extract(epoch FROM (window_start + make_interval(secs => $4) - now())))::int AS reset_seconds`

/** QuickbookToursRepo.sellableTours(operatorId, tourId): the one tour when `one`, placeholders numbered as @effect/sql does. */
const sellableTours = (one: boolean) => {
  const [tour, op1, op2] = one ? ["t.id = $1", "$2", "$3"] : ["true", "$1", "$2"]
  return `
        SELECT t.id, t.title, o.name AS operator_name, t.timezone, t.currency, t.duration_minutes, t.departure_times, t.requires_phone,
          t.booking_system_product_id AS product_id, o.booking_system_account_id AS account_id, a.sandbox AS account_sandbox,
          COALESCE((SELECT json_agg(json_build_object('id', pc.id, 'title', pc.title, 'isDefault', pc.is_default,
              'minAge', pc.min_age, 'maxAge', pc.max_age) ORDER BY pc.position, pc.id)
            FROM tour_pricing_categories pc WHERE pc.tour_id = t.id), '[]'::json) AS categories,
          COALESCE((SELECT array_agg(r.id ORDER BY r.position, r.id) FROM tour_rates r WHERE r.tour_id = t.id), '{}') AS rate_ids
        FROM tours t JOIN operators o ON o.id = t.operator_id JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
        WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL
          AND ${tour}
          AND EXISTS (
            SELECT 1 FROM site_tours st JOIN sites s ON s.id = st.site_id
            WHERE st.tour_id = t.id AND s.owner_operator_id = ${op1}
              AND (t.operator_id = ${op2} OR st.sold_by = 'site_owner'))
        ORDER BY t.title, t.id`
}
const ALL_TOURS = sellableTours(false)
const ONE_TOUR = sellableTours(true)

/** QuickbookToursRepo.merchantOf: the selling operator's merchant and whether it is a sandbox. */
const MERCHANT = `
          SELECT merchant_id, sandbox FROM operator_payment_accounts WHERE operator_id = $1`

/** BookingSystemAccounts.byId */
const ACCOUNT = `
        SELECT a.id, a.kind, a.name, a.base_url, a.access_key, a.secret_key, a.service_channel_id,
          json_agg(json_build_object('id', o.id, 'name', o.name, 'timezone', o.timezone) ORDER BY o.name, o.id) AS operators
        FROM booking_system_accounts a
        JOIN operators o ON o.booking_system_account_id = a.id
        WHERE a.id = $1
        GROUP BY a.id
        ORDER BY a.name, a.id`

/** QuickbookTicketsRepo.findSale (src/quickbook/tickets/QuickbookTicketsRepo.ts), scoped to the terminal */
const SALE = `
      SELECT reference, terminal_id, (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode,
        selling_operator_id, status, valid_until, hold_expires_at, cart_line, customer,
        language, booking_code, confirmed_at, failed_at, failure_reason,
        (SELECT p.state = 'refunded' FROM quickbook_payments p
          WHERE p.sale_reference = s.reference AND p.payment_id = s.paid_by_payment_id) AS money_returned,
        ((start_date + 2)::timestamp AT TIME ZONE (cart_line->'start'->>'timeZone')) AS link_expires_at
      FROM quickbook_sales s
      WHERE reference = $1
        AND terminal_id = $2`

// ---- HTTP --------------------------------------------------------------------------------------------

class Refusal {
  constructor(readonly status: number, readonly code: string, readonly detail: string) {}
}

const send = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

interface Terminal {
  readonly id: string
  readonly name: string
  readonly operatorId: string
  readonly operatorName: string
  readonly mode: QuickbookKeyMode
}

/** The key, the terminal and the terminal's reads budget, in the service's order. */
const authenticate = async (req: IncomingMessage): Promise<Terminal> => {
  const token = BEARER.exec(req.headers.authorization ?? "")?.[1] ?? ""
  const parts = parseQuickbookKey(token)
  if (!parts) throw new Refusal(401, "unauthorized", "not a quickbook key")
  const { rows: [key] } = await pool.query(FIND_KEY, [parts.id])
  if (!key || key.mode !== parts.mode || !secretMatches(parts.secret, key.secret_hash)) {
    throw new Refusal(401, "unauthorized", "the key is not valid")
  }
  if (key.revoked_at !== null) throw new Refusal(401, "unauthorized", "the key has been revoked")
  if (key.expires_at !== null && key.expires_at.getTime() <= Date.now()) {
    throw new Refusal(401, "unauthorized", "the key has expired")
  }
  const header = req.headers["quickbook-terminal"]
  const terminalId = parseTerminalHeader(typeof header === "string" ? header : undefined)
  if (terminalId === undefined) throw new Refusal(400, "terminal_not_registered", "no terminal id")
  const { rows: [t] } = await pool.query(FIND_TERMINAL, [key.id, terminalId])
  if (!t || t.deactivated_at !== null || !t.bound) {
    throw new Refusal(403, "terminal_not_registered", "terminal not usable")
  }
  const { perMinute } = QUICKBOOK_BUDGETS.reads
  const w = QUICKBOOK_WINDOW_SECONDS
  const { rows: [hit] } = await pool.query(RATE_LIMIT_HIT, [quickbookBucket("reads", t.id), w, w, w])
  if (hit.count > perMinute) throw new Refusal(429, "rate_limited", "reads budget spent")
  return { id: t.id, name: t.name, operatorId: t.operator_id, operatorName: t.operator_name, mode: key.mode }
}

interface TourRow {
  readonly id: string
  readonly title: string
  readonly operator_name: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly departure_times: Array<string>
  readonly product_id: string
  readonly account_id: string
  readonly account_sandbox: boolean
  readonly categories: Array<Category>
  readonly rate_ids: Array<string>
}

/** The Bókun adapter's availability call for one day (src/adapters/bokun/adapter.ts), bare. */
const slotsFor = async (tour: TourRow, date: string) => {
  const { rows: [account] } = await pool.query(ACCOUNT, [tour.account_id])
  if (!account) throw new Refusal(503, "provider_unavailable", "no account")
  const enc = encodeURIComponent
  const pathAndQuery = `/activity.json/${enc(tour.product_id)}/availabilities?start=${enc(date)}&end=${
    enc(date)
  }&includeSoldOut=true`
  const headers = signedHeaders({
    accessKey: account.access_key,
    secretKey: account.secret_key,
    method: "GET",
    pathAndQuery,
    epochMillis: Date.now()
  })
  const response = await fetch(account.base_url.replace(/\/+$/, "") + pathAndQuery, {
    headers: { ...headers, accept: "application/json" }
  })
  if (!response.ok) throw new Refusal(503, "provider_unavailable", `the booking system answered ${response.status}`)
  const items = (await response.json()) as Parameters<typeof departures>[0]
  return slotsOf(departures(items), {
    date,
    timeZone: tour.timezone,
    currency: tour.currency,
    rateIds: tour.rate_ids,
    guestTypes: guestTypesOf(tour.categories),
    now: new Date()
  })
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const dateOf = (url: URL) => {
  const date = url.searchParams.get("date")
  if (date === null || !DAY.test(date)) throw new Refusal(400, "invalid_request", "the floor needs ?date=YYYY-MM-DD")
  return date
}

/** The merchant's sandbox flag (null: no merchant), as QuickbookTours reads it after the tours. */
const merchantOf = async (terminal: Terminal): Promise<boolean | null> => {
  const { rows: [m] } = await pool.query<{ merchant_id: string; sandbox: boolean }>(MERCHANT, [terminal.operatorId])
  return m ? m.sandbox : null
}

/** The sandbox rule of src/quickbook/terminals/testKeys.ts. */
const mayUse = (terminal: Terminal, tour: TourRow, merchantSandbox: boolean | null) =>
  sandboxMismatch(terminal.mode, { bookingSystemSandbox: tour.account_sandbox, merchantSandbox }) === null

const list = async (terminal: Terminal, url: URL) => {
  const date = dateOf(url)
  const { rows: all } = await pool.query<TourRow>(ALL_TOURS, [terminal.operatorId, terminal.operatorId])
  const merchant = await merchantOf(terminal)
  const rows = all.filter((r) => mayUse(terminal, r, merchant))
  const tours = []
  for (let i = 0; i < rows.length; i += 4) {
    tours.push(
      ...await Promise.all(
        rows.slice(i, i + 4).map(async (r) => {
          const slots = await slotsFor(r, date).catch(() => null)
          return {
            activityId: r.id,
            operatorName: r.operator_name,
            tourName: r.title,
            timeZone: r.timezone,
            currency: r.currency,
            durationMinutes: r.duration_minutes,
            departureTimes: r.departure_times,
            guestTypes: guestTypesOf(r.categories).map(({ categoryId: _, ...g }) => g),
            date,
            available: slots === null ? null : slots.some((x) => !x.soldOut && x.guests.length > 0)
          }
        })
      )
    )
  }
  return { terminal: { id: terminal.id, name: terminal.name, operatorName: terminal.operatorName }, tours }
}

const slots = async (terminal: Terminal, tourId: string, url: URL) => {
  const date = dateOf(url)
  const { rows: [tour] } = await pool.query<TourRow>(ONE_TOUR, [tourId, terminal.operatorId, terminal.operatorId])
  const merchant = await merchantOf(terminal)
  if (!tour || !mayUse(terminal, tour, merchant)) throw new Refusal(403, "tour_not_sellable_here", "not sold here")
  const found = await slotsFor(tour, date)
  return {
    activityId: tour.id,
    date,
    timeZone: tour.timezone,
    currency: tour.currency,
    slots: found.map((s) => ({
      time: s.time,
      seatsLeft: s.seatsLeft,
      soldOut: s.soldOut,
      guests: s.guests,
      bookingPriceMinor: s.bookingPriceMinor
    }))
  }
}

let ticketSecret: Uint8Array | undefined

const ticket = async (terminal: Terminal, reference: string, url: URL) => {
  const lang = (url.searchParams.get("lang") ?? "en") as TicketLanguage
  if (!REFERENCE_PATTERN.test(reference)) throw new Refusal(404, "not_found", "no such sale")
  const { rows: [sale] } = await pool.query(SALE, [reference, terminal.id])
  if (!sale) throw new Refusal(404, "not_found", "no such sale")
  if (sale.key_mode !== terminal.mode) throw new Refusal(403, "tour_not_sellable_here", "sale of the other mode")
  if (sale.status !== "confirmed" || sale.booking_code === null || sale.customer === null) {
    throw new Refusal(404, "not_found", "no ticket yet")
  }
  const exp = Math.floor((sale.link_expires_at as Date).getTime() / 1000)
  return ticketOf(
    { reference, bookingCode: sale.booking_code, customer: sale.customer, cartLine: sale.cart_line },
    lang,
    {
      bookingPageUrl: `${PUBLIC_URL}/b/${encodeURIComponent(sale.booking_code)}`,
      pdfUrl: `${PUBLIC_URL}${TICKET_PDF_PATH}/${reference}.pdf?lang=${lang}&exp=${exp}&sig=${
        signTicketLink(ticketSecret!, reference, exp)
      }`
    }
  )
}

const SLOTS = /^\/api\/quickbook\/v1\/tours\/([^/]+)\/slots$/
const TICKET = /^\/api\/quickbook\/v1\/sales\/([^/]+)\/ticket$/

const handle = async (req: IncomingMessage, res: ServerResponse) => {
  try {
    const url = new URL(req.url ?? "/", "http://floor")
    if (url.pathname === "/healthz") return send(res, 200, { status: "ok" })
    if (req.method !== "GET") throw new Refusal(404, "not_found", `no endpoint ${req.method} ${url.pathname}`)
    const slotsPath = SLOTS.exec(url.pathname)
    const ticketPath = TICKET.exec(url.pathname)
    if (url.pathname !== "/api/quickbook/v1/tours" && !slotsPath && !ticketPath) {
      throw new Refusal(404, "not_found", `no endpoint GET ${url.pathname}`)
    }
    const terminal = await authenticate(req)
    const body = slotsPath
      ? await slots(terminal, decodeURIComponent(slotsPath[1]!), url)
      : ticketPath
      ? await ticket(terminal, decodeURIComponent(ticketPath[1]!), url)
      : await list(terminal, url)
    send(res, 200, body)
  } catch (error) {
    if (error instanceof Refusal) send(res, error.status, { error: { code: error.code, clerkMessage: error.detail } })
    else {
      console.error(error)
      send(res, 500, { error: { code: "internal", clerkMessage: "floor error" } })
    }
  }
}

const main = async () => {
  const { rows: [secret] } = await pool.query("SELECT value FROM service_secrets WHERE name = 'cursor'")
  if (!secret) throw new Error("service_secrets has no shared secret; run the migrations")
  ticketSecret = deriveTicketLinkSecret(secret.value)
  const server = createServer((req, res) => void handle(req, res))
  const port = Number(process.env.PORT ?? 3002)
  server.listen(port, "127.0.0.1", () => console.log(`desk floor listening on http://127.0.0.1:${port}`))
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
