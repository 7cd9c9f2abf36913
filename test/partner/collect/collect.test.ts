/**
 * POST /api/v1/collect through the real server on PostgreSQL: an event becomes one `site_events` row
 * (visitor hash, never the address or user agent; the path without its query; referrer host, UTM,
 * channel, device), text/plain is taken as JSON, bots and foreign origins are dropped with the same
 * 202, the limit per address and site answers 429, and bad bodies and unknown keys their 4xx.
 * Each test sends from addresses of its own (a trusted proxy's X-Forwarded-For, a setting).
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { visitorHash } from "../../../src/analytics/events.js"
import { PublishableKeys } from "../../../src/partner/auth/PublishableKeys.js"
import { makeWorld } from "../../support/fixtures.js"
import { type Reply } from "../../support/http.js"
import { withRoomInWindow } from "../../support/rateWindow.js"
import { TestServer, testServer } from "../../support/server.js"
import { createSite, insertTour } from "../../support/tours.js"

const LIMIT = 5
const env = PublishableKeys.Default.pipe(
  Layer.provideMerge(testServer({
    env: {
      ANALYTICS_FLUSH_INTERVAL_MS: "50",
      ANALYTICS_COLLECT_PER_MINUTE: String(LIMIT),
      ANALYTICS_CLIENT_IP_HEADER: "X-Forwarded-For",
      ANALYTICS_COUNTRY_HEADER: "CF-IPCountry"
    }
  }))
)

const ORIGIN = "https://www.alpha-tours.example"
const FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0"
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

let ipCounter = 0
/** An address no other test uses. */
const freshIp = () => `203.0.113.${++ipCounter}`

const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const site = yield* createSite(w.alpha, "Alpha")
  const other = yield* createSite(w.beta, "Beta")
  const tour = yield* insertTour({ operatorId: w.alpha, title: "Fjord", sites: [site] })
  const elsewhere = yield* insertTour({ operatorId: w.beta, title: "Elsewhere", sites: [other] })
  const keys = yield* PublishableKeys
  const created = yield* keys.create({
    siteId: site,
    createdBy: w.alice,
    name: "Analytics",
    origins: ["*.alpha-tours.example", "http://localhost:8080"]
  }).pipe(Effect.orDie)
  return { site, pk: created.key, tour, elsewhere }
})

/** A POST as a browser's sendBeacon makes it: text/plain JSON, Origin and User-Agent. */
const post = (
  body: unknown,
  options: { ip: string; origin?: string | null; ua?: string; contentType?: string; raw?: string; country?: string }
) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    return yield* Effect.promise(async (): Promise<Reply> => {
      const headers: Record<string, string> = {
        "content-type": options.contentType ?? "text/plain;charset=UTF-8",
        "user-agent": options.ua ?? FIREFOX,
        "x-forwarded-for": `10.0.0.1, ${options.ip}`
      }
      if (options.origin !== null) headers.origin = options.origin ?? ORIGIN
      if (options.country !== undefined) headers["cf-ipcountry"] = options.country
      const res = await fetch(`${baseUrl}/api/v1/collect`, {
        method: "POST",
        headers,
        body: options.raw ?? JSON.stringify(body)
      })
      const text = await res.text()
      const type = res.headers.get("content-type") ?? ""
      return {
        status: res.status,
        headers: res.headers,
        text,
        body: type.includes("json") && text ? JSON.parse(text) : text
      }
    })
  })

const rowsOf = (site: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<any>`SELECT * FROM site_events WHERE site_id = ${site} ORDER BY id`.pipe(Effect.orDie)
  )

/** The site's rows once `n` are there (the buffer writes every 50 ms); polls, never asserts a time. */
const waitForRows = (site: string, n: number) =>
  rowsOf(site).pipe(
    Effect.filterOrFail((rows) => rows.length >= n),
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("20 seconds"))),
    Effect.orDie
  )

const pageview = (pk: string, extra: Record<string, unknown> = {}) => ({
  key: pk,
  kind: "pageview",
  url:
    "https://www.alpha-tours.example/tours/fjord?utm_source=newsletter&utm_medium=email&utm_campaign=spring&ref=x#top",
  referrer: "https://mail.google.com/mail/u/0/",
  new_visitor: true,
  ...extra
})

layer(env, { excludeTestServices: true, timeout: 180_000 })("POST /api/v1/collect", (it) => {
  it.effect("202 with no body; the row has the day's visitor hash and no address, user agent or query", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ip = freshIp()
      const res = yield* post(pageview(s.pk), { ip, country: "no" })
      expect(res.status, res.text).toBe(202)
      expect(res.text).toBe("")
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN)
      const [row] = yield* waitForRows(s.site, 1)
      expect(row).toMatchObject({
        kind: "pageview",
        path: "/tours/fjord",
        referrer_host: "mail.google.com",
        utm_source: "newsletter",
        utm_medium: "email",
        utm_campaign: "spring",
        channel: "Email",
        country: "NO",
        device: "desktop",
        browser: "Firefox",
        os: "Windows",
        new_visitor: true,
        tour_id: null,
        booking_code: null
      })
      // The visitor is the HMAC of the day's salt over site|ip|ua: computed here from the stored salt.
      const sql = yield* SqlClient.SqlClient
      const [salt] = yield* sql<{ salt: Uint8Array }>`
        SELECT salt FROM site_salts WHERE day = (${row.at}::timestamptz AT TIME ZONE 'UTC')::date`.pipe(Effect.orDie)
      expect(row.visitor).toBe(visitorHash(salt!.salt, s.site, ip, FIREFOX))
      expect(row.visitor).toMatch(/^[0-9a-f]{64}$/)
      // Nothing of the address or the user agent anywhere in the row.
      const stored = JSON.stringify(row)
      expect(stored).not.toContain(ip)
      expect(stored).not.toContain("Mozilla")
      expect(stored).not.toContain("ref=x")
    }))

  it.effect("application/json is taken too; tour steps keep their tour and the attempt its booking code", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ip = freshIp()
      const tour = s.tour
      const view = yield* post(
        {
          key: s.pk,
          kind: "tour_view",
          url: "http://localhost:8080/catalogue.html",
          new_visitor: false,
          tour_id: tour
        },
        { ip, origin: "http://localhost:8080", contentType: "application/json", ua: IPHONE }
      )
      expect(view.status, view.text).toBe(202)
      const attempt = yield* post(
        {
          key: s.pk,
          kind: "checkout_attempt",
          url: "https://shop.alpha-tours.example/checkout",
          referrer: "https://www.alpha-tours.example/tours",
          new_visitor: false,
          tour_id: tour,
          booking_code: "ABC-123"
        },
        { ip, ua: IPHONE }
      )
      expect(attempt.status, attempt.text).toBe(202)
      const rows = yield* waitForRows(s.site, 2)
      expect(rows.map((r: any) => [r.kind, r.tour_id, r.booking_code, r.device, r.channel, r.referrer_host])).toEqual([
        ["tour_view", tour, null, "mobile", "Direct", null],
        // alpha-tours.example from shop.alpha-tours.example is another host: a referral.
        ["checkout_attempt", tour, "ABC-123", "mobile", "Referral", "alpha-tours.example"]
      ])
      // Same address and browser on the same day: one visitor.
      expect(rows[0].visitor).toBe(rows[1].visitor)
      expect(rows[0].country).toBeNull()
    }))

  it.effect("a page that sends application/json with fetch gets its preflight answered (any origin: the POST checks it)", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const res = yield* Effect.promise(() =>
        fetch(`${baseUrl}/api/v1/collect`, {
          method: "OPTIONS",
          headers: {
            origin: ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type"
          }
        })
      )
      expect(res.status).toBe(204)
      expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN)
      expect(res.headers.get("access-control-allow-methods")).toBe("POST")
      expect(res.headers.get("access-control-allow-headers")).toBe("content-type")
    }))

  it.effect("a tour the site does not sell (or none at all) is stored as no tour; the step still counts", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ip = freshIp()
      for (const tourId of [s.elsewhere, randomUUID()]) {
        const res = yield* post(
          { key: s.pk, kind: "availability_check", url: `${ORIGIN}/t`, new_visitor: false, tour_id: tourId },
          { ip }
        )
        expect(res.status, res.text).toBe(202)
      }
      const rows = yield* waitForRows(s.site, 2)
      expect(rows.map((r: any) => [r.kind, r.tour_id])).toEqual([["availability_check", null], [
        "availability_check",
        null
      ]])
    }))

  it.effect("bots and pages from other origins (or none) are answered 202 and stored nowhere", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ip = freshIp()
      for (
        const options of [
          { ip, ua: GOOGLEBOT },
          { ip, ua: "" },
          { ip, origin: "https://evil.example" },
          { ip, origin: "https://alpha-tours.example" }, // the wildcard allows subdomains only
          { ip, origin: null }
        ]
      ) {
        const res = yield* post(pageview(s.pk, { url: "https://www.alpha-tours.example/dropped" }), options)
        expect(res.status, res.text).toBe(202)
        expect(res.text).toBe("")
      }
      // A marker sent after them: once it is written, anything sent before would be too.
      yield* post(pageview(s.pk, { url: "https://www.alpha-tours.example/marker" }), { ip })
      const rows = yield* waitForRows(s.site, 1)
      expect(rows.map((r: any) => r.path)).toEqual(["/marker"])
    }))

  it.effect("past the limit per address and site: 429 with Retry-After; another address, or the same address on another site, is still taken", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const w = yield* makeWorld
      const otherSite = yield* createSite(w.alpha, "Alpha two")
      const otherKey = yield* Effect.flatMap(
        PublishableKeys,
        (keys) =>
          keys.create({ siteId: otherSite, createdBy: w.alice, name: "Analytics", origins: ["*.alpha-tours.example"] })
      )
        .pipe(Effect.orDie)
      const ip = freshIp()
      yield* withRoomInWindow(20)
      for (let i = 0; i < LIMIT; i++) expect((yield* post(pageview(s.pk), { ip })).status).toBe(202)
      for (let i = 0; i < 2; i++) {
        const limited = yield* post(pageview(s.pk), { ip })
        expect(limited.status, limited.text).toBe(429)
        expect(limited.headers.get("content-type")).toContain("application/problem+json")
        const retryAfter = Number(limited.headers.get("retry-after"))
        expect(retryAfter).toBeGreaterThan(0)
        expect(retryAfter).toBeLessThanOrEqual(60)
        expect(limited.body.type).toContain("rate-limited")
      }
      // Another address on the same site, and the same address on another site: budgets of their own.
      expect((yield* post(pageview(s.pk), { ip: freshIp() })).status).toBe(202)
      for (let i = 0; i < LIMIT; i++) expect((yield* post(pageview(otherKey.key), { ip })).status).toBe(202)
      expect((yield* post(pageview(otherKey.key), { ip })).status).toBe(429)
      const rows = yield* waitForRows(s.site, LIMIT + 1)
      expect(rows.length).toBe(LIMIT + 1)
      expect((yield* waitForRows(otherSite, LIMIT)).length).toBe(LIMIT)
      // Counted in the instance's memory: no statement per event, nothing of the address in the database.
      const sql = yield* SqlClient.SqlClient
      const buckets = yield* sql<{ bucket: string }>`
        SELECT bucket FROM rate_limit_counters WHERE bucket LIKE 'collect:%'`.pipe(Effect.orDie)
      expect(buckets).toEqual([])
    }))

  it.effect("bad bodies: 400 naming the field, 415 for another media type, 413 past 8 KiB, 404 for an unknown key", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const ip = freshIp()
      const cases: Array<[unknown, string]> = [
        [{ ...pageview(s.pk), kind: "click" }, "kind"],
        [{ ...pageview(s.pk), key: "pk_widget_short" }, "key"],
        [{ ...pageview(s.pk), url: "not a url" }, "url"],
        [{ ...pageview(s.pk), url: "ftp://www.alpha-tours.example/x" }, "url"],
        [{ ...pageview(s.pk), new_visitor: "yes" }, "new_visitor"],
        [{ ...pageview(s.pk), tour_id: randomUUID() }, "tour_id"],
        [{ ...pageview(s.pk), kind: "tour_view", tour_id: "nope" }, "tour_id"],
        [{ ...pageview(s.pk), kind: "checkout_open", booking_code: "ABC" }, "booking_code"]
      ]
      for (const [body, field] of cases) {
        const res = yield* post(body, { ip })
        expect(res.status, `${field}: ${res.text}`).toBe(400)
        expect(res.headers.get("content-type")).toContain("application/problem+json")
        expect(JSON.stringify(res.body.invalid_params ?? res.body.detail)).toContain(field)
      }
      const notJson = yield* post(undefined, { ip, raw: "kind=pageview" })
      expect(notJson.status, notJson.text).toBe(400)
      const form = yield* post(pageview(s.pk), { ip, contentType: "application/x-www-form-urlencoded" })
      expect(form.status, form.text).toBe(415)
      const big = yield* post(pageview(s.pk, { referrer: "https://x.example/" + "a".repeat(9000) }), { ip })
      expect(big.status, big.text).toBe(413)
      const unknown = yield* post(pageview("pk_widget_" + "Z".repeat(24)), { ip })
      expect(unknown.status, unknown.text).toBe(404)
      expect(unknown.headers.get("content-type")).toContain("application/problem+json")
      // None of them stored anything.
      yield* post(pageview(s.pk, { url: "https://www.alpha-tours.example/marker" }), { ip })
      expect((yield* waitForRows(s.site, 1)).map((r: any) => r.path)).toEqual(["/marker"])
    }))
})
