/**
 * Starts the service exactly as `npm start` does (node --max-semi-space-size=64 --import tsx src/main.ts serve) on a fresh data directory with
 * the embedded PostgreSQL, calls it with a key from demo.json, tries every partner write on the demo
 * data as the README shows (check-in, payment link, cancel, reschedule options and the move) and a
 * desk sale, stops it with SIGTERM, then kills a run
 * hard (a cancel that crashes the process right after the provider refunded) and checks that the
 * next start recovers: the database, and the cancel finished by the recovery job with one refund.
 *
 * Every call to the service has a deadline: a call that gets no answer fails the test naming its
 * step, with the service's output, instead of hanging until the test's own timeout (which left the
 * service running once in CI). A failing test kills the services it started.
 */
import { describe, expect, it, onTestFailed, onTestFinished } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { freeFixedPort } from "./support/globalSetup.js"

const ROOT = path.resolve(import.meta.dirname, "..")

/** How long one request may take before the test fails: far above a loaded machine's few seconds. */
const REQUEST_TIMEOUT_MS = 30_000

/** Every service this test started, for the output on failure and the kill at the end. */
const started: Array<Started> = []

interface Started {
  readonly child: ChildProcess
  readonly output: () => string
  readonly base: string
}

const start = async (
  step: string,
  dataDir: string,
  port: number,
  pgPort: number,
  env: Record<string, string> = {}
): Promise<Started> => {
  // `npm start` runs exactly this command (package.json "start").
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.start as string
  expect(script).toBe("node --max-semi-space-size=64 --import tsx src/main.ts serve")
  const child = spawn(process.execPath, ["--max-semi-space-size=64", "--import", "tsx", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...withoutDatabaseUrl(),
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_PG_PORT: String(pgPort),
      // CLUSTER_PORT unset, as a newcomer runs it: the job runner picks a free port.
      SANDBOX_PORT: "0",
      LOG_LEVEL: "info",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c) => (out += c))
  child.stderr!.on("data", (c) => (out += c))
  const base = `http://127.0.0.1:${port}`
  started.push({ child, output: () => out, base })
  const deadline = Date.now() + 180_000
  let last = "no answer yet"
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${step}: service exited ${child.exitCode}:\n${out}`)
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) })
      // Requests that arrive while the app is built wait for it (src/http/lifecycle/nodeServer.ts): the
      // first answer can come a moment before the start banner is printed.
      if (res.status === 200 && out.includes("Partner API listening on")) return { child, output: () => out, base }
      last = `status ${res.status}`
      await res.body?.cancel()
    } catch (e) {
      last = String(e) // not up yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  child.kill("SIGKILL")
  throw new Error(`${step}: service did not answer /healthz within 180 s (last: ${last}):\n${out}`)
}

/** The tail of a service's output, for failure messages. */
const tail = (output: () => string) => `--- service output (last 4000 characters) ---\n${output().slice(-4000)}`

/**
 * GET `pathname` from `service` (with a bearer `secret`) and read the body: fails naming `step`
 * when there is no complete answer within REQUEST_TIMEOUT_MS.
 */
const get = async (service: Started, step: string, pathname: string, secret?: string) => {
  const t0 = Date.now()
  try {
    const res = await fetch(`${service.base}${pathname}`, {
      headers: secret ? { authorization: `Bearer ${secret}` } : {},
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    const text = await res.text()
    return { status: res.status, json: () => JSON.parse(text) }
  } catch (cause) {
    const reason = cause instanceof Error && cause.name === "TimeoutError"
      ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`
      : `failed after ${Date.now() - t0} ms: ${String(cause)}`
    throw new Error(`${step}: GET ${pathname} ${reason}\n${tail(service.output)}`, { cause })
  }
}

/** POST JSON; resolves with the status, or with the error when the connection dies (a killed service). */
const post = async (service: Started, pathname: string, secret: string, body: unknown) => {
  try {
    const res = await fetch(`${service.base}${pathname}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        "idempotency-key": crypto.randomUUID()
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
    })
    return { status: res.status, text: await res.text() }
  } catch (cause) {
    return { status: 0, text: String(cause) }
  }
}

/** One query on the service's embedded database (the password file is in the data directory). */
const query = async (dataDir: string, pgPort: number, text: string, values: Array<unknown> = []) => {
  const password = fs.readFileSync(path.join(dataDir, "pg-password"), "utf8").trim()
  const client = new pg.Client({
    connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/postgres`
  })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

const withoutDatabaseUrl = () => {
  const env = { ...process.env }
  delete env.DATABASE_URL
  return env
}

/** The exit code; fails with the process's output when it has not exited within a minute (a hang). */
const exited = (child: ChildProcess, output?: () => string) =>
  new Promise<number | null>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the service did not exit within 60 s:\n${output ? tail(output) : ""}`))
    }, 60_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve(code)
    })
  })

const postgresRunning = (dataDir: string) => {
  const pidFile = path.join(dataDir, "pg", "postmaster.pid")
  if (!fs.existsSync(pidFile)) return false
  const pid = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0])
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * After the test, failed or not: services still running get SIGTERM (they stop their PostgreSQL),
 * then SIGKILL; a PostgreSQL still left on the data directory is stopped; the directory is removed.
 */
const stopLeftovers = async (dataDir: string) => {
  for (const { child } of started) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    child.kill("SIGTERM")
    const gone = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000)
      child.once("exit", () => {
        clearTimeout(timer)
        resolve(true)
      })
    })
    if (!gone) child.kill("SIGKILL")
  }
  if (postgresRunning(dataDir)) {
    const pid = Number(fs.readFileSync(path.join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0])
    process.kill(pid, "SIGQUIT")
  }
  fs.rmSync(dataDir, { recursive: true, force: true })
}

/** A call to the demo's desk (Quickbook) API with its test key and terminal. */
const desk = async (service: Started, demo: any, method: "GET" | "POST", pathname: string, body?: unknown) => {
  const terminal = demo.quickbook.terminals.find((t: any) => t.active)
  const res = await fetch(`${service.base}/api/quickbook/v1${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${demo.quickbook.keys[0].secret}`,
      "quickbook-terminal": terminal.id,
      ...(body !== undefined ? { "content-type": "application/json" } : {})
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) }
}

/**
 * A desk sale on the demo, end to end against its sandboxes: a tour and a start time with a
 * seat, a quote, the card payment at the Surfboard sandbox (demo.json `paymentSandboxUrl`, on the
 * desk's card terminal), the book, and the ticket's PDF.
 */
const sellAtTheDesk = async (service: Started, demo: any) => {
  const terminal = demo.quickbook.terminals.find((t: any) => t.active)
  // The demo's first days are sold out (a full manifest): the first day from tomorrow with a seat.
  for (let ahead = 1; ahead <= 14; ahead++) {
    const day = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Oslo" }).format(
      new Date(Date.now() + ahead * 86_400_000)
    )
    const tours = (await desk(service, demo, "GET", `/tours?date=${day}`)).json().tours
    for (const tour of tours.filter((t: any) => t.available === true)) {
      const slots = (await desk(service, demo, "GET", `/tours/${tour.activityId}/slots?date=${day}`)).json().slots
      const slot = slots.find((s: any) =>
        !s.soldOut && (s.seatsLeft === null || s.seatsLeft >= 1) && s.guests.length > 0
      )
      if (!slot) continue
      const quote = await desk(service, demo, "POST", "/quote", {
        activityId: tour.activityId,
        start: { date: day, time: slot.time },
        guests: [{ type: slot.guests[0].type, count: 1 }]
      })
      expect(quote.status, quote.text).toBe(200)
      const { reference, cartLine } = quote.json()
      const paid = await fetch(`${demo.quickbook.paymentSandboxUrl}/sandbox/sales`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          merchantId: cartLine.payment.merchantId,
          terminalId: terminal.paymentTerminalId,
          amountMinor: cartLine.totalMinor,
          currency: cartLine.currency,
          referenceId: reference
        })
      })
      expect(paid.status).toBe(200)
      const { orderId, paymentId } = (await paid.json()) as { orderId: string; paymentId: string }
      const book = await desk(service, demo, "POST", "/book", {
        reference,
        payment: { provider: "payprovider", orderId, paymentId },
        customer: { firstName: "Kari", lastName: "Nordmann", email: "kari@example.com" },
        language: "nb"
      })
      expect(book.status, book.text).toBe(200)
      expect(book.json().status, book.text).toBe("confirmed")
      const pdf = await fetch(book.json().ticket.pdfUrl)
      expect(pdf.headers.get("content-type")).toBe("application/pdf")
      expect((await desk(service, demo, "GET", `/sales/${reference}`)).json().status).toBe("confirmed")
      return
    }
  }
  expect.fail("no demo tour with a seat in the next 14 days")
}

/**
 * Every partner write on the demo data with the `Demo: everything` key, as the README's "Try every
 * write" does: a check-in on today's manifest, and the bookings demo.json `examples` names for the
 * payment link, the cancel and the reschedule. Each answers 200 with the expected result, and the
 * sandboxes show it (the refund at the payment sandbox, the move in the booking system).
 */
const tryEveryWrite = async (service: Started, demo: any, dataDir: string, pgPort: number) => {
  const key = demo.keys.find((k: any) => k.name === "Demo: everything").secret
  const write = async (step: string, pathname: string, body: unknown) => {
    const res = await post(service, pathname, key, body)
    expect(res.status, `${step}: ${res.text}\n${tail(service.output)}`).toBe(200)
    return JSON.parse(res.text)
  }
  // The demo's data is consistent: its bookings of linked tours are bookings of the booking system,
  // and a pay-later balance is upcoming only while its charge is ahead.
  const [unknown] = await query(
    dataDir,
    pgPort,
    `
    SELECT count(*)::int AS n FROM bookings b JOIN tours t ON t.id = b.tour_id
    WHERE t.booking_system_product_id IS NOT NULL AND b.status IN ('CONFIRMED', 'RESERVED', 'CANCELLED', 'REFUNDED')
      AND NOT EXISTS (SELECT 1 FROM bokun_sandbox.bookings x WHERE x.confirmation_code = b.provider_reference
        AND x.external_reference = b.confirmation_code)`
  )
  expect(unknown.n, "demo bookings the booking system does not know").toBe(0)
  const [stale] = await query(
    dataDir,
    pgPort,
    `
    SELECT count(*)::int AS n FROM bookings WHERE pay_later_status = 'upcoming' AND pay_later_charge_at <= now()`
  )
  expect(stale.n, "upcoming pay-later balances whose charge time has passed").toBe(0)

  // Check-in: the first booking of today's manifest.
  const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Oslo" }).format(new Date())
  const manifest = (await get(service, "try writes, manifest", `/api/v1/manifest?date=${today}`, key)).json()
  const row = manifest.departures[0].bookings[0]
  const checkin = await write("check-in", `/api/v1/manifest/${row.id}/checkin`, { status: "checked_in" })
  expect(checkin).toEqual({ id: row.id, check_in: { status: "checked_in", present: null } })

  // Payment link: the pay-later booking's balance, emailed to the guest.
  const payLater = demo.examples.payment_link.booking_id
  const booking = (await get(service, "try writes, pay-later booking", `/api/v1/bookings/${payLater}`, key)).json()
  expect(booking.payment.pay_later.status).toBe("upcoming")
  const link = await write("payment link", `/api/v1/bookings/${payLater}/payment-link`, {})
  expect(link).toMatchObject({
    id: payLater,
    kind: "deferred_balance",
    amount_minor: booking.payment.pay_later.amount_minor,
    emailed: true
  })
  expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\//)

  // Cancel with a full refund, returned at the payment sandbox.
  const cancelled = demo.examples.cancel.booking_id
  const cancel = await write("cancel", `/api/v1/bookings/${cancelled}/cancel`, { reason: "Trying the demo" })
  expect(cancel).toMatchObject({
    id: cancelled,
    status: "REFUNDED",
    already_cancelled: false,
    refund: { outcome: "refunded" }
  })
  const refunds = await query(
    dataDir,
    pgPort,
    `
    SELECT r.amount_minor::int AS amount_minor FROM booking_payments p
      JOIN surfboard_sandbox.orders r ON r.purchase_order_id = p.provider_order_id WHERE p.booking_id = $1`,
    [cancelled]
  )
  expect(refunds.map((r) => r.amount_minor)).toEqual([cancel.refund.amount_minor])

  // Reschedule to the next day: the options, then the move, done in the booking system.
  const moved = demo.examples.reschedule.booking_id
  const from = demo.examples.reschedule.experience_date as string
  const next = new Date(Date.parse(from) + 86_400_000).toISOString().slice(0, 10)
  const options = (await get(
    service,
    "try writes, reschedule options",
    `/api/v1/bookings/${moved}/reschedule-options?date=${next}`,
    key
  )).json()
  expect(options, JSON.stringify(options)).toMatchObject({
    id: moved,
    date: next,
    current_date: from,
    reschedulable: true,
    available: true
  })
  const target = options.options[0]
  const reschedule = await write("reschedule", `/api/v1/bookings/${moved}/reschedule`, {
    date: next,
    start_time_id: target.start_time_id
  })
  expect(reschedule).toMatchObject({
    id: moved,
    status: "CONFIRMED",
    date: next,
    start_time: target.start_time,
    previous_date: from,
    already_on_date: false
  })
  const [line] = await query(
    dataDir,
    pgPort,
    `
    SELECT l.date::text AS date FROM bookings b JOIN bokun_sandbox.bookings x ON x.confirmation_code = b.provider_reference
      JOIN bokun_sandbox.product_bookings l ON l.booking_id = x.id WHERE b.id = $1`,
    [moved]
  )
  expect(line.date).toBe(next)
}

describe("npm start", () => {
  it(
    "serves the demo on the embedded database, stops cleanly, and recovers after a hard kill",
    { timeout: 480_000 },
    async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "partner-start-"))
      fs.chmodSync(dataDir, 0o755)
      const [port, pgPort] = [await freeFixedPort(), await freeFixedPort()]
      onTestFailed(() => {
        for (const [i, service] of started.entries()) {
          console.error(`service #${i + 1} (${service.base}):\n${tail(service.output)}`)
        }
      })
      onTestFinished(() => stopLeftovers(dataDir))
      const first = await start("first start", dataDir, port, pgPort)
      expect(first.output()).toContain(`${first.base}/api/v1`)
      expect(first.output()).toContain("demo.json")
      expect(first.output()).toContain("curl")
      // Exchange rates (the demo's rates sandbox, one request at start): every day of the last 400 has a
      // rate of its own or of an earlier banking day within the week, for every kept currency.
      const [rateGaps] = await query(
        dataDir,
        pgPort,
        `
        SELECT count(*)::int AS n FROM (SELECT current_date - i AS day FROM generate_series(0, 392) AS g(i)) AS d
        CROSS JOIN (VALUES ('EUR'), ('USD'), ('SEK'), ('DKK'), ('GBP')) AS c(currency)
        WHERE NOT EXISTS (SELECT 1 FROM exchange_rates r WHERE r.currency = c.currency AND r.day BETWEEN d.day - 7 AND d.day)`
      )
      expect(rateGaps.n, "days of the last 400 without an exchange rate").toBe(0)
      // Site analytics: by the time the service says it is ready, the rollups have taken in every raw
      // event; both demo sites have 400 days of traffic that converts, and the added operator's tours
      // have a funnel on the owner's site; the closed months are folded.
      const [analytics] = await query(
        dataDir,
        pgPort,
        `
        SELECT (SELECT last_id FROM analytics_rollup_state WHERE rollup = 'events') AS watermark,
          (SELECT max(id) FROM site_events) AS last_event,
          (SELECT count(*)::int FROM analytics_site_daily d JOIN sites s ON s.id = d.site_id
            WHERE s.domain IN ('fjordexplorer.no', 'tejocruises.pt') AND d.day > current_date - 400
              AND d.day < current_date) AS site_days,
          (SELECT sum(conversions)::int FROM analytics_source_daily d JOIN sites s ON s.id = d.site_id
            WHERE s.domain = 'tejocruises.pt' AND dimension = 'channel' AND d.day > current_date - 30) AS recent_conversions,
          (SELECT sum(views)::int FROM analytics_tour_daily d JOIN sites s ON s.id = d.site_id
            JOIN tours t ON t.id = d.tour_id JOIN operators o ON o.id = t.operator_id
            WHERE s.domain = 'fjordexplorer.no' AND o.name = 'Arctic Whale Safari AS') AS added_operator_views,
          (SELECT count(*)::int FROM analytics_site_monthly) AS months`
      )
      expect(Number(analytics.last_event)).toBeGreaterThan(0)
      expect(Number(analytics.watermark)).toBe(Number(analytics.last_event))
      // Every past day of the 400 (today has no row yet in the first minutes after midnight UTC).
      expect(analytics.site_days).toBe(798)
      expect(analytics.recent_conversions).toBeGreaterThan(0)
      expect(analytics.added_operator_views).toBeGreaterThan(0)
      expect(analytics.months).toBeGreaterThanOrEqual(24)

      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, "demo.json"), "utf8"))
      const key = demo.keys.find((k: any) => k.state === "active" && k.scopes.includes("bookings:read"))
      const me = await get(first, "first start, the demo key", "/api/v1/me", key.secret)
      expect(me.status).toBe(200)
      expect(me.json().key.id).toBe(key.id)
      const bookings = await get(first, "first start, bookings", "/api/v1/bookings?limit=100", key.secret)
      expect(bookings.json().data.length).toBe(100)
      // The demo's booking system is mirrored at start: today's manifest is full (in the operator's zone).
      const reader = demo.keys.find((k: any) => k.state === "active" && k.scopes.includes("manifest:read"))
      const today = new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Oslo" }).format(new Date())
      const manifest = (await get(first, "first start, manifest", `/api/v1/manifest?date=${today}`, reader.secret))
        .json()
      expect(manifest.totals.passengers, JSON.stringify(manifest.totals)).toBeGreaterThan(50)
      expect(manifest.synced_at).not.toBeNull()
      for (const state of ["expired", "revoked", "creator_demoted"]) {
        const k = demo.keys.find((x: any) => x.state === state)
        expect((await get(first, `first start, a ${state} key`, "/api/v1/me", k.secret)).status, state).toBe(401)
      }
      // Last month's commission statement per operator; a key over more than six operators: too_many.
      const financeKey = (name: string) => demo.keys.find((k: any) => k.name === name).secret
      for (const [name, operator] of [["Fjord", "Fjord Explorer AS"], ["Lisboa", "Lisboa Tejo Cruises Lda"]]) {
        const path = "/api/v1/finance/statements"
        const statements =
          (await get(first, `first start, ${name}'s statement`, path, financeKey(`Demo: finance, ${name}`)))
            .json()
        expect(statements.statements.map((st: any) => st.partner.name)).toEqual([operator])
        expect(statements.statements[0].sections[0].entries_total).toBeGreaterThan(0)
      }
      const many = await get(
        first,
        "first start, statements of many operators",
        "/api/v1/finance/statements",
        financeKey("Demo: finance, many operators")
      )
      expect(many.json()).toMatchObject({ too_many: true, statements: [] })
      // Every partner write works on the demo data, as the README shows.
      await tryEveryWrite(first, demo, dataDir, pgPort)
      // A desk sells a tour with the demo's test key and terminal, paid at the demo's payment sandbox.
      await sellAtTheDesk(first, JSON.parse(fs.readFileSync(path.join(dataDir, "demo.json"), "utf8")))

      // SIGTERM: drained, database shut down, exit code 0.
      first.child.kill("SIGTERM")
      expect(await exited(first.child, first.output)).toBe(0)
      expect(postgresRunning(dataDir)).toBe(false)

      // A run killed hard leaves PostgreSQL behind; the next start stops it and carries on with the same data.
      // The kill comes from a cancel at its most dangerous step: the payment provider has refunded the
      // money and the process dies (SIGKILL) before recording it (CRASH_AT, CRASH_MODE=kill).
      const second = await start("second start (then killed hard)", dataDir, port, pgPort, {
        CRASH_AT: "cancel.after_refund",
        CRASH_MODE: "kill",
        BOOKING_CHANGE_LEASE_SECONDS: "1"
      })
      const canceller = demo.keys.find((k: any) =>
        k.state === "active" && k.scopes.includes("bookings.cancel:write") && k.scopes.includes("bookings:read")
      )
      const [paid] = await query(
        dataDir,
        pgPort,
        `
      SELECT b.id, b.amount_minor::int AS amount_minor, p.provider_order_id FROM bookings b JOIN booking_payments p ON p.booking_id = b.id
      WHERE b.status = 'CONFIRMED' AND b.payment_strategy = 'pay_now' AND b.operator_id = $1 AND b.experience_date > current_date
        -- Not one the writes tried above changed (a reschedule's emails are its own).
        AND NOT EXISTS (SELECT 1 FROM booking_changes c WHERE c.booking_id = b.id)
      ORDER BY b.id LIMIT 1`,
        [canceller.partners[0].id]
      )
      expect(paid, "a paid demo booking").toBeDefined()
      const killed = await post(second, `/api/v1/bookings/${paid.id}/cancel`, canceller.secret, {
        reason: "Crash test: killed after the refund"
      })
      expect(killed.status, killed.text).toBe(0)
      await exited(second.child, second.output)
      expect(second.child.signalCode).toBe("SIGKILL")
      expect(postgresRunning(dataDir)).toBe(true)
      const third = await start("start after a hard kill", dataDir, port, pgPort, {
        BOOKING_CHANGE_RECOVERY_CRON: "*/2 * * * * *"
      })
      expect(third.output()).toContain("ended abruptly")
      const again = await get(third, "start after a hard kill, the demo key", "/api/v1/me", key.secret)
      expect(again.status).toBe(200)
      // The recovery job finishes the cancel: the money went back once, each email is queued once.
      const deadline = Date.now() + 60_000
      let status = ""
      while (Date.now() < deadline && status !== "REFUNDED") {
        status =
          (await get(third, "after the kill, the cancelled booking", `/api/v1/bookings/${paid.id}`, canceller.secret))
            .json().status
        if (status !== "REFUNDED") await new Promise((r) => setTimeout(r, 500))
      }
      expect(status, tail(third.output)).toBe("REFUNDED")
      const refunds = await query(
        dataDir,
        pgPort,
        `
      SELECT o.id, o.amount_minor::int AS amount_minor FROM surfboard_sandbox.orders o WHERE o.purchase_order_id = $1`,
        [paid.provider_order_id]
      )
      expect(refunds.map((r) => r.amount_minor)).toEqual([paid.amount_minor])
      const emails = await query(
        dataDir,
        pgPort,
        `SELECT template FROM email_outbox WHERE booking_id = $1 ORDER BY template`,
        [paid.id]
      )
      expect(emails.map((e) => e.template)).toEqual(["booking_cancelled_guest", "booking_cancelled_team"])
      third.child.kill("SIGINT")
      expect(await exited(third.child, third.output)).toBe(0)
      expect(postgresRunning(dataDir)).toBe(false)

      // A half-initialised data directory (initdb cut short) is rebuilt.
      fs.rmSync(path.join(dataDir, "pg", ".initialised"))
      fs.rmSync(path.join(dataDir, "demo.json"))
      const fourth = await start("start on a half-initialised directory", dataDir, port, pgPort)
      expect(fourth.output()).toContain("half-initialised")
      expect(fs.existsSync(path.join(dataDir, "demo.json"))).toBe(true)
      fourth.child.kill("SIGTERM")
      expect(await exited(fourth.child, fourth.output)).toBe(0)
    }
  )
})
