/**
 * The browser check (issue 5): examples/catalogue.html, served from a page origin, reads the real
 * server's catalogue with only a publishable key, in headless Chromium (the Debian `chromium`
 * package, driven by playwright-core). From an origin the key allows the page lists the tours and
 * a tour's availability; from another origin the browser refuses the answers (CORS). The page's
 * analytics snippet (examples/analytics.js) reports the visit: a pageview, the tour steps as the
 * test clicks, each stored once; from the other origin nothing is stored.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schedule } from "effect"
import * as fs from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { PublishableKeys } from "../../src/partner/auth/PublishableKeys.js"
import { browser } from "../support/browser.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"
import { createSite, insertTour } from "../support/tours.js"

const PAGE = fs.readFileSync(path.resolve(import.meta.dirname, "../../examples/catalogue.html"), "utf8")
const SNIPPET = fs.readFileSync(path.resolve(import.meta.dirname, "../../examples/analytics.js"), "utf8")

/** Headless Chromium says "HeadlessChrome" in its user agent, which the collector drops as a bot. */
const USER_AGENT =
  "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"

/** A static server for the example page on 127.0.0.1 (a page origin of its own). */
const pageServer = Effect.acquireRelease(
  Effect.async<Server & { origin: string }>((resume) => {
    const server = createServer((req, res) => {
      if (req.url?.startsWith("/analytics.js")) {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" })
        return res.end(SNIPPET)
      }
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(PAGE)
    })
    server.listen(
      0,
      "127.0.0.1",
      () =>
        resume(
          Effect.succeed(
            Object.assign(server, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
          )
        )
    )
  }),
  (server) => Effect.promise(() => new Promise<void>((r) => server.close(() => r())))
)

const env = PublishableKeys.Default.pipe(Layer.provideMerge(testServer()))

layer(env, { excludeTestServices: true, timeout: 180_000 })("examples/catalogue.html in headless Chromium", (it) => {
  it.scoped("lists the catalogue from an allowed origin; from another origin the browser refuses the answers", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha, "Widget")
      yield* insertTour({ operatorId: w.alpha, title: "Harbour Lights Cruise", sites: [site] })
      yield* insertTour({ operatorId: w.alpha, title: "Seal Safari", sites: [site] })
      const allowed = yield* pageServer
      const other = yield* pageServer
      const key = yield* Effect.flatMap(
        PublishableKeys,
        (k) => k.create({ siteId: site, createdBy: w.alice, name: "Widget", origins: [allowed.origin] })
      ).pipe(Effect.orDie)
      const b = yield* browser

      const open = (origin: string) =>
        Effect.promise(async () => {
          const page = await b.newPage({ userAgent: USER_AGENT })
          const console: Array<string> = []
          page.on("console", (m) => console.push(m.text()))
          await page.goto(`${origin}/catalogue.html?api=${encodeURIComponent(baseUrl)}&key=${key.key}`)
          await page.waitForSelector("#status[data-state]", { timeout: 30_000 })
          return { page, console }
        })

      const ok = yield* open(allowed.origin)
      expect(yield* Effect.promise(() => ok.page.getAttribute("#status", "data-state"))).toBe("loaded")
      const titles = yield* Effect.promise(() =>
        ok.page.$$eval("li.tour", (items) => items.map((li) => li.textContent ?? ""))
      )
      expect(titles.map((t) => t.replace(/ Availability$/, "").trim()).sort()).toEqual([
        "Harbour Lights Cruise",
        "Seal Safari"
      ])

      // A tour's next 14 days (the tour has no booking system here: every day unknown, never "sold out").
      yield* Effect.promise(() => ok.page.click("li.tour:first-child button"))
      yield* Effect.promise(() => ok.page.waitForSelector("#availability-status[data-state]", { timeout: 30_000 }))
      expect(yield* Effect.promise(() => ok.page.getAttribute("#availability-status", "data-state"))).toBe("unknown")
      expect(yield* Effect.promise(() => ok.page.$$eval("tr.day", (rows) => rows.length))).toBe(14)
      // Unknown days carry `available: true` (never sold out); the page shows them as unknown, not as "yes".
      expect(
        yield* Effect.promise(() =>
          ok.page.$$eval("tr.day td:nth-child(2)", (cells) => [...new Set(cells.map((c) => c.textContent))])
        )
      )
        .toEqual(["?"])

      // The funnel's last steps, then the events the page reported, once each.
      yield* Effect.promise(() => ok.page.click("#checkout-open"))
      yield* Effect.promise(() => ok.page.click("#checkout-attempt"))
      const sql = yield* SqlClient.SqlClient
      const events = sql<{ kind: string; tour_id: string | null; new_visitor: boolean; path: string }>`
        SELECT kind, tour_id, new_visitor, path FROM site_events WHERE site_id = ${site} ORDER BY id`.pipe(Effect.orDie)
      const stored = yield* events.pipe(
        Effect.filterOrFail((rows) => rows.length >= 5),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("20 seconds"))),
        Effect.orDie
      )
      const firstTour = yield* Effect.promise(() => ok.page.getAttribute("li.tour:first-child", "data-id"))
      // Each step once; the page sends them as separate beacons, so their order in the table is the
      // order they arrived in, not always the order they were sent in.
      const byKind = (rows: ReadonlyArray<ReadonlyArray<string | null>>) =>
        [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])))
      expect(byKind(stored.map((e) => [e.kind, e.tour_id]))).toEqual(byKind([
        ["pageview", null],
        ["tour_view", firstTour],
        ["availability_check", firstTour],
        ["checkout_open", firstTour],
        ["checkout_attempt", firstTour]
      ]))
      // A first visit in this browser: every event of the visit says so; the path has no query (no key).
      expect(stored.every((e) => e.new_visitor && e.path === "/catalogue.html")).toBe(true)

      const refused = yield* open(other.origin)
      expect(yield* Effect.promise(() => refused.page.getAttribute("#status", "data-state"))).toBe("error")
      expect(yield* Effect.promise(() => refused.page.$$eval("li.tour", (items) => items.length))).toBe(0)
      // Chromium names the reason on the console.
      expect(refused.console.join("\n")).toContain("CORS")
      // Its pageview came from an origin the key does not allow: answered 202 and stored nowhere. A marker
      // from the allowed page, sent after it, is the next row.
      yield* Effect.promise(() => ok.page.click("#checkout-open"))
      const after = yield* events.pipe(
        Effect.filterOrFail((rows) => rows.length >= 6),
        Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("20 seconds"))),
        Effect.orDie
      )
      expect(after.slice(5).map((e) => e.kind)).toEqual(["checkout_open"])
    }))
})
