import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { TourContent } from "../../../src/demo/tourContent.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { get, type Reply } from "../../support/http.js"
import { conforms, dereferencedSpec } from "../../support/openapi.js"
import { testServer } from "../../support/server.js"
import { addToSite, createSite, insertTour, setSeason, storeRawHtml } from "../../support/tours.js"
import { violations, XSS_CORPUS } from "../../support/xss.js"

const ids = (body: any): Array<string> => body.data.map((t: any) => t.id)
const tours = (key: string, query = "") => get(`/api/v1/tours${query}`, key)
const tour = (key: string, id: string, query = "") => get(`/api/v1/tours/${id}${query}`, key)

/** Every content field filled, with English and Norwegian (bokmål) text. */
const FULL: TourContent = {
  excerpt: "Two hours among the islands of the inner Oslofjord.",
  durationMinutes: 120,
  pricedPerBooking: false,
  languages: ["en", "nb", "de"],
  rating: { average: 4.7, count: 1284 },
  meetingPoint: { name: "Pier 3, Aker Brygge", address: "Stranden 1, 0250 Oslo", lat: 59.9106, lng: 10.7271 },
  cancellation: { title: "Free cancellation up to 24 hours before departure", freeHours: 24 },
  minAge: 4,
  difficulty: "easy",
  departureTimes: ["16:00", "09:00", "12:30", "09:00"],
  descriptionHtml:
    `<h2>The fjord</h2><p>Sail <strong>past</strong> <a href="https://fjord.example/map" target="_blank">islands</a>.</p>`,
  includedHtml: "<ul><li>Guide</li></ul>",
  excludedHtml: "<p>Food</p>",
  inclusions: ["Live guide", "Hot drinks on board"],
  exclusions: ["Hotel pickup"],
  highlights: ["Fortress views", "Seals on the skerries"],
  knowBefore: ["Dress warmly"],
  photos: ["https://img.example/cover.jpg", "https://img.example/2.jpg"],
  pricingCategories: [
    { id: "101", title: "Adult", isDefault: true, minAge: 16 },
    { id: "102", title: "Child", minAge: 4, maxAge: 15 }
  ],
  rates: [
    { id: "201", title: "Standard", description: null },
    { id: "202", title: "Lunch included", description: "Shrimp sandwich and a drink." }
  ],
  linkedProducts: [{ label: "Auf Deutsch", language: "de" }],
  translations: {
    nb: {
      title: "Oslofjorden rundt",
      excerpt: "To timer blant øyene i indre Oslofjord.",
      descriptionHtml: "<h2>Fjorden</h2><p>Seil forbi øyene.</p>",
      includedHtml: "<ul><li>Guide</li></ul>",
      inclusions: ["Guide", "Varm drikke om bord"],
      highlights: ["Utsikt mot festningen"],
      meetingPointName: "Brygge 3, Aker Brygge",
      cancellationTitle: "Gratis avbestilling inntil 24 timer før avgang",
      pricingCategories: { "101": "Voksen", "102": "Barn" },
      rates: { "202": { title: "Med lunsj", description: "Rekesmørbrød og drikke." } }
    }
  }
}

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("GET /api/v1/tours", (it) => {
  it.effect("list and detail show every field; detail adds the detail fields", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha, "Alpha")
      const id = yield* insertTour({
        operatorId: w.alpha,
        title: "Oslofjord Cruise",
        slug: "oslofjord",
        sites: [site],
        content: FULL
      })
      yield* setSeason(id, { fromPriceMinor: 49900, currency: "NOK", known: true, nextAvailableDate: "2026-12-02" })
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })

      const list = yield* tours(key.token)
      expect(list.status).toBe(200)
      expect(list.headers.get("cache-control")).toBe("private, no-store")
      const summary = {
        id,
        slug: "oslofjord",
        title: "Oslofjord Cruise",
        excerpt: "Two hours among the islands of the inner Oslofjord.",
        photos: ["https://img.example/cover.jpg", "https://img.example/2.jpg"],
        duration_minutes: 120,
        priced_per_booking: false,
        languages: ["en", "nb", "de"],
        from_price: { amount_minor: 49900, currency: "NOK" },
        season: { known: true, next_available_date: "2026-12-02" },
        rating: { average: 4.7, count: 1284 },
        operator: { name: `Alpha Tours ${w.tag}`, legal_name: null, org_number: null, is_seller: true, is_host: true },
        seller: { name: `Alpha Tours ${w.tag}`, legal_name: null, org_number: null },
        locale: "en"
      }
      expect(list.body).toEqual({ data: [summary], next_cursor: null })

      const detail = yield* tour(key.token, id)
      expect(detail.status).toBe(200)
      expect(detail.body).toEqual({
        ...summary,
        timezone: "Europe/Oslo",
        description_html: `<h2>The fjord</h2><p>Sail <strong>past</strong> ` +
          `<a href="https://fjord.example/map" target="_blank" rel="noopener noreferrer">islands</a>.</p>`,
        included_html: "<ul><li>Guide</li></ul>",
        excluded_html: "<p>Food</p>",
        inclusions: ["Live guide", "Hot drinks on board"],
        exclusions: ["Hotel pickup"],
        highlights: ["Fortress views", "Seals on the skerries"],
        know_before: ["Dress warmly"],
        meeting_point: { name: "Pier 3, Aker Brygge", address: "Stranden 1, 0250 Oslo", lat: 59.9106, lng: 10.7271 },
        cancellation: { title: "Free cancellation up to 24 hours before departure", free_hours: 24 },
        min_age: 4,
        difficulty: "easy",
        departure_times: ["09:00", "12:30", "16:00"],
        pricing_categories: [
          { id: "101", is_default: true, title: "Adult", min_age: 16, max_age: null },
          { id: "102", is_default: false, title: "Child", min_age: 4, max_age: 15 }
        ],
        rates: [
          { id: "201", title: "Standard", description: null },
          { id: "202", title: "Lunch included", description: "Shrimp sandwich and a drink." }
        ],
        linked_products: [{ label: "Auf Deutsch", language: "de", tour_id: null }],
        checkout: { activity_id: id }
      })
    }))

  it.effect("a tour with no content and no season yet: empty fields, from_price null, season not known (never closed)", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha)
      const bare = yield* insertTour({ operatorId: w.alpha, title: "Bare", sites: [site] })
      const unknown = yield* insertTour({ operatorId: w.alpha, title: "Unknown", sites: [site] })
      const soldOut = yield* insertTour({ operatorId: w.alpha, title: "Nothing on sale", sites: [site] })
      yield* setSeason(unknown, { fromPriceMinor: 45000, currency: "NOK", known: false, nextAvailableDate: null })
      yield* setSeason(soldOut, { fromPriceMinor: null, currency: null, known: true, nextAvailableDate: null })
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })

      const byId = new Map<string, any>((yield* tours(key.token)).body.data.map((t: any) => [t.id, t]))
      expect(byId.get(bare)).toMatchObject({
        slug: null,
        excerpt: null,
        photos: [],
        duration_minutes: null,
        priced_per_booking: false,
        languages: [],
        from_price: null,
        season: { known: false, next_available_date: null },
        rating: null,
        locale: "en"
      })
      expect(byId.get(unknown)).toMatchObject({
        from_price: { amount_minor: 45000, currency: "NOK" },
        season: { known: false, next_available_date: null }
      })
      expect(byId.get(soldOut)).toMatchObject({ from_price: null, season: { known: true, next_available_date: null } })

      const detail = (yield* tour(key.token, bare)).body
      expect(detail).toMatchObject({
        description_html: "",
        included_html: "",
        excluded_html: "",
        inclusions: [],
        exclusions: [],
        highlights: [],
        know_before: [],
        meeting_point: null,
        cancellation: { title: null, free_hours: null },
        min_age: null,
        difficulty: null,
        departure_times: [],
        pricing_categories: [],
        rates: [],
        linked_products: [],
        checkout: { activity_id: bare }
      })
    }))

  describe("translations", () => {
    it.effect("locale replaces the translated fields, the rest stay English, and `locale` says which applied", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha)
        const translated = yield* insertTour({
          operatorId: w.alpha,
          title: "Oslofjord Cruise",
          sites: [site],
          content: FULL
        })
        const english = yield* insertTour({
          operatorId: w.alpha,
          title: "English only",
          sites: [site],
          content: { excerpt: "Plain." }
        })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })

        const nb = yield* tours(key.token, "?locale=nb")
        const [a, b] = nb.body.data
        expect([a.id, b.id]).toEqual([translated, english])
        expect(a).toMatchObject({
          title: "Oslofjorden rundt",
          excerpt: "To timer blant øyene i indre Oslofjord.",
          locale: "nb"
        })
        expect(a.languages).toEqual(["en", "nb", "de"])
        expect(b).toMatchObject({ title: "English only", excerpt: "Plain.", locale: "en" })

        const detail = (yield* tour(key.token, translated, "?locale=nb")).body
        expect(detail).toMatchObject({
          title: "Oslofjorden rundt",
          locale: "nb",
          description_html: "<h2>Fjorden</h2><p>Seil forbi øyene.</p>",
          included_html: "<ul><li>Guide</li></ul>",
          // Not translated: the English value stays.
          excluded_html: "<p>Food</p>",
          exclusions: ["Hotel pickup"],
          know_before: ["Dress warmly"],
          inclusions: ["Guide", "Varm drikke om bord"],
          highlights: ["Utsikt mot festningen"],
          meeting_point: {
            name: "Brygge 3, Aker Brygge",
            address: "Stranden 1, 0250 Oslo",
            lat: 59.9106,
            lng: 10.7271
          },
          cancellation: { title: "Gratis avbestilling inntil 24 timer før avgang", free_hours: 24 },
          pricing_categories: [
            { id: "101", is_default: true, title: "Voksen", min_age: 16, max_age: null },
            { id: "102", is_default: false, title: "Barn", min_age: 4, max_age: 15 }
          ],
          rates: [
            { id: "201", title: "Standard", description: null },
            { id: "202", title: "Med lunsj", description: "Rekesmørbrød og drikke." }
          ],
          difficulty: "easy",
          departure_times: ["09:00", "12:30", "16:00"]
        })
        expect((yield* tour(key.token, english, "?locale=nb")).body).toMatchObject({
          title: "English only",
          locale: "en"
        })
      }))

    it.effect("unknown locales fall back to English; regions are ignored; no reads nb; a malformed locale is 400", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha)
        const id = yield* insertTour({ operatorId: w.alpha, title: "Oslofjord Cruise", sites: [site], content: FULL })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        const english = (yield* tour(key.token, id)).body
        for (const locale of ["de", "zz", "en", "EN", "fil", "en-GB"]) {
          const res = yield* tour(key.token, id, `?locale=${locale}`)
          expect(res.status, locale).toBe(200)
          expect(res.body, locale).toEqual(english)
          expect((yield* tours(key.token, `?locale=${locale}`)).body.data[0].locale, locale).toBe("en")
        }
        for (const locale of ["nb", "NB", "nb-NO", "nb_NO", "no"]) {
          expect((yield* tour(key.token, id, `?locale=${locale}`)).body, locale).toMatchObject({
            title: "Oslofjorden rundt",
            locale: "nb"
          })
        }
        for (const locale of ["", "n", "1b", "nb-", "../x", "nb;drop", "x".repeat(40)]) {
          const res = yield* tours(key.token, `?locale=${encodeURIComponent(locale)}`)
          expect(res.status, locale).toBe(400)
          expect(res.body.invalid_params[0].name).toBe("locale")
          expect((yield* tour(key.token, id, `?locale=${encodeURIComponent(locale)}`)).status).toBe(400)
        }
      }))
  })

  it.effect("description, included and excluded HTML are cleaned on every read, translations too", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha)
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
      // PostgreSQL text cannot hold NUL; the unit test covers that vector.
      const storable = XSS_CORPUS.filter((v) => !v.includes("\u0000"))
      const id = yield* insertTour({
        operatorId: w.alpha,
        sites: [site],
        content: { translations: { nb: { title: "Tur", descriptionHtml: storable.join("\n") } } }
      })
      for (const vector of storable) {
        yield* storeRawHtml(id, {
          description: vector,
          included: `<ul><li>${vector}</li></ul>`,
          excluded: vector + "<p>tail"
        })
        const body = (yield* tour(key.token, id)).body
        for (const field of ["description_html", "included_html", "excluded_html"]) {
          expect(violations(body[field]), `${field} of ${vector}: ${body[field]}`).toEqual([])
          expect(body[field]).not.toMatch(/<script|<svg|<img|<iframe|\son[a-z]+=|style=|javascript:/i)
        }
      }
      const nb = (yield* tour(key.token, id, "?locale=nb")).body
      expect(nb.locale).toBe("nb")
      expect(violations(nb.description_html)).toEqual([])
      expect(nb.description_html).toContain("<p>Hello world</p>")
    }))

  describe("operator and seller", () => {
    it.effect("own tour on own site: host and seller; resold: the site owner sells; added operator: sells its own", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha, "Alpha")
        yield* addToSite(site, w.beta)
        const own = yield* insertTour({ operatorId: w.alpha, title: "Own", sites: [site] })
        const resold = yield* insertTour({
          operatorId: w.cetus,
          title: "Resold",
          sites: [{ site, soldBy: "site_owner" }]
        })
        const added = yield* insertTour({ operatorId: w.beta, title: "Added", sites: [site] })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        const byId = new Map<string, any>((yield* tours(key.token)).body.data.map((t: any) => [t.id, t]))
        expect([...byId.keys()].sort()).toEqual([own, resold, added].sort())
        const alpha = { name: `Alpha Tours ${w.tag}`, legal_name: null, org_number: null }
        expect(byId.get(own)).toMatchObject({ operator: { ...alpha, is_seller: true, is_host: true }, seller: alpha })
        expect(byId.get(resold)).toMatchObject({
          operator: { name: `Cetus Cruises ${w.tag}`, is_seller: false, is_host: false },
          seller: alpha
        })
        expect(byId.get(added)).toMatchObject({
          operator: { name: `Beta Boats ${w.tag}`, is_seller: true, is_host: false },
          seller: { name: `Beta Boats ${w.tag}`, legal_name: null, org_number: null }
        })
        expect((yield* tour(key.token, resold)).body.seller).toEqual(alpha)
      }))

    it.effect("legal name and org number come from the operator; a tour on several sites shows once, as on its operator's site", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE operators SET legal_name = 'Beta Boats AS', org_number = '999888777' WHERE id = ${w.beta}`
        const alphaSite = yield* createSite(w.alpha, "Alpha")
        const betaSite = yield* createSite(w.beta, "Beta")
        yield* addToSite(alphaSite, w.beta)
        // Sold on Beta's own site and resold by Alpha on its site.
        const both = yield* insertTour({
          operatorId: w.beta,
          sites: [{ site: alphaSite, soldBy: "site_owner" }, betaSite]
        })
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["tours:read"] })
        const list = (yield* tours(key.token)).body.data
        expect(list.map((t: any) => t.id)).toEqual([both])
        const beta = { name: `Beta Boats ${w.tag}`, legal_name: "Beta Boats AS", org_number: "999888777" }
        expect(list[0]).toMatchObject({ operator: { ...beta, is_seller: true, is_host: true }, seller: beta })
        // Narrowed to Alpha, only Alpha's site is in view: Alpha resells it.
        const viaAlpha = (yield* tours(key.token, `?partner_id=${w.alpha}`)).body.data
        expect(viaAlpha[0]).toMatchObject({
          operator: { ...beta, is_seller: false, is_host: false },
          seller: { name: `Alpha Tours ${w.tag}`, legal_name: null, org_number: null }
        })
      }))
  })

  describe("tenant isolation", () => {
    it.effect("another operator's tour, a draft, an archived tour, a tour on no site: 404 and never listed", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const mySite = yield* createSite(w.alpha)
        const theirSite = yield* createSite(w.cetus)
        const mine = yield* insertTour({ operatorId: w.alpha, sites: [mySite] })
        const theirs = yield* insertTour({ operatorId: w.cetus, sites: [theirSite] })
        const draft = yield* insertTour({ operatorId: w.alpha, status: "draft", sites: [mySite] })
        const archived = yield* insertTour({ operatorId: w.alpha, status: "archived", sites: [mySite] })
        const nowhere = yield* insertTour({ operatorId: w.alpha })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        expect(ids((yield* tours(key.token)).body)).toEqual([mine])
        const missing = yield* tour(key.token, "00000000-0000-4000-8000-000000000000")
        expect(missing.status).toBe(404)
        expect(missing.body.detail).toBe("tour not found, or not yours")
        for (const id of [theirs, draft, archived, nowhere]) {
          const res = yield* tour(key.token, id)
          expect(res.status).toBe(404)
          expect(res.headers.get("content-type")).toBe("application/problem+json")
          expect(res.body.detail).toBe(missing.body.detail)
        }
        expect((yield* tour(key.token, mine)).status).toBe(200)
        const carol = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["tours:read"] })
        expect(ids((yield* tours(carol.token)).body)).toEqual([theirs])
        expect((yield* tour(carol.token, mine)).status).toBe(404)
        expect((yield* tour(key.token, "not-a-uuid")).status).toBe(400)
      }))

    it.effect("an operator added to a site reads that site's whole catalogue; an operator with no site reads nothing", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha)
        yield* addToSite(site, w.beta)
        const alphaTour = yield* insertTour({ operatorId: w.alpha, sites: [site] })
        const betaTour = yield* insertTour({ operatorId: w.beta, sites: [site] })
        const beta = yield* createKey({ by: w.bob, operators: [w.beta], scopes: ["tours:read"] })
        expect(ids((yield* tours(beta.token)).body)).toEqual([alphaTour, betaTour])
        expect((yield* tour(beta.token, alphaTour)).status).toBe(200)
        const carol = yield* createKey({ by: w.carol, operators: [w.cetus], scopes: ["tours:read"] })
        expect((yield* tours(carol.token)).body).toEqual({ data: [], next_cursor: null })
        expect((yield* tour(carol.token, alphaTour)).status).toBe(404)
      }))

    it.effect("partner_id narrows to one operator's sites; an id outside the key is 404", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const alphaSite = yield* createSite(w.alpha)
        const betaSite = yield* createSite(w.beta)
        const a = yield* insertTour({ operatorId: w.alpha, sites: [alphaSite] })
        const b = yield* insertTour({ operatorId: w.beta, sites: [betaSite] })
        const key = yield* createKey({ by: w.bob, operators: [w.alpha, w.beta], scopes: ["tours:read"] })
        expect(ids((yield* tours(key.token)).body)).toEqual([a, b])
        expect(ids((yield* tours(key.token, `?partner_id=${w.beta}`)).body)).toEqual([b])
        expect((yield* tour(key.token, a, `?partner_id=${w.beta}`)).status).toBe(404)
        expect((yield* tour(key.token, a, `?partner_id=${w.alpha}`)).status).toBe(200)
        for (const other of [w.cetus, "not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
          const res = yield* tours(key.token, `?partner_id=${other}`)
          expect(res.status).toBe(404)
          expect(res.body.detail).toContain("not found, or not yours")
          expect((yield* tour(key.token, a, `?partner_id=${other}`)).status).toBe(404)
        }
      }))

    it.effect("a linked product names its tour only when that tour is in the caller's catalogue", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha)
        const other = yield* createSite(w.cetus)
        const german = yield* insertTour({ operatorId: w.alpha, title: "Auf Deutsch", sites: [site] })
        const hidden = yield* insertTour({ operatorId: w.cetus, title: "Elsewhere", sites: [other] })
        const draft = yield* insertTour({ operatorId: w.alpha, status: "draft", sites: [site] })
        const main = yield* insertTour({
          operatorId: w.alpha,
          sites: [site],
          content: {
            linkedProducts: [
              { label: "Deutsch", language: "de", tourId: german },
              { label: "Elsewhere", language: null, tourId: hidden },
              { label: "Soon", language: "es", tourId: draft }
            ]
          }
        })
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
        expect((yield* tour(key.token, main)).body.linked_products).toEqual([
          { label: "Deutsch", language: "de", tour_id: german },
          { label: "Elsewhere", language: null, tour_id: null },
          { label: "Soon", language: "es", tour_id: null }
        ])
      }))
  })

  it.effect("needs tours:read (403) and a key (401)", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha)
      const id = yield* insertTour({ operatorId: w.alpha, sites: [site] })
      const reader = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      for (const path of ["/api/v1/tours", `/api/v1/tours/${id}`]) {
        const forbidden = yield* get(path, reader.token)
        expect(forbidden.status).toBe(403)
        expect(forbidden.body.scope).toBe("tours:read")
        expect((yield* get(path)).status).toBe(401)
      }
    }))

  describe("pagination", () => {
    /** Walks every page and returns the ids in order. */
    const walk = (key: string, limit: number, query = "") =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        let cursor: string | null = null
        do {
          const res: Reply = yield* tours(key, `?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ""}`)
          expect(res.status).toBe(200)
          expect(res.body.data.length).toBeLessThanOrEqual(limit)
          seen.push(...ids(res.body))
          cursor = res.body.next_cursor
        } while (cursor !== null)
        return seen
      })

    it.effect("oldest first by creation then id; every page follows the cursor; limit bounds; cursors are checked", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const site = yield* createSite(w.alpha)
        const same = new Date("2026-01-01T00:00:00Z")
        const created: Array<{ id: string; at: number }> = []
        for (let i = 0; i < 7; i++) {
          // Three share one creation instant: the id breaks the tie.
          const at = i < 3 ? same : new Date(Date.UTC(2026, 1, 10 - i, 12, 0, 0, i))
          created.push({
            id: yield* insertTour({ operatorId: w.alpha, sites: [site], createdAt: at }),
            at: at.getTime()
          })
        }
        const expected = [...created].sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1)).map((t) => t.id)
        const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read", "bookings:read"] })

        expect(ids((yield* tours(key.token)).body)).toEqual(expected)
        for (const limit of [1, 2, 3, 7, 100]) expect(yield* walk(key.token, limit), `limit ${limit}`).toEqual(expected)
        expect(yield* walk(key.token, 2, "&locale=nb")).toEqual(expected)

        const first = yield* tours(key.token, "?limit=3")
        expect(first.body.next_cursor).toMatch(/^[A-Za-z0-9_.-]{1,200}$/)
        // A tour published while paging after the position appears; the order never shifts.
        const later = yield* insertTour({ operatorId: w.alpha, sites: [site] })
        const rest = yield* tours(key.token, `?limit=100&cursor=${first.body.next_cursor}`)
        expect(ids(rest.body)).toEqual([...expected.slice(3), later])
        // The locale may change between pages (it changes text, not the set).
        expect(ids((yield* tours(key.token, `?limit=100&locale=pt&cursor=${first.body.next_cursor}`)).body)).toEqual([
          ...expected.slice(3),
          later
        ])

        for (const bad of ["0", "101", "-1", "1.5", "abc", "1e2", ""]) {
          const res = yield* tours(key.token, `?limit=${bad}`)
          expect(res.status, `limit=${bad}`).toBe(400)
          expect(res.body.invalid_params[0]).toEqual({ name: "limit", reason: "must be a whole number from 1 to 100" })
        }
        const cursor = first.body.next_cursor as string
        const altered = cursor.slice(0, -2) + (cursor.endsWith("A") ? "BB" : "AA")
        const forged = yield* tours(key.token, `?cursor=${altered}`)
        expect(forged.status).toBe(400)
        expect(forged.body.invalid_params[0].name).toBe("cursor")
        const otherFilter = yield* tours(key.token, `?partner_id=${w.alpha}&cursor=${cursor}`)
        expect(otherFilter.status).toBe(400)
        expect(otherFilter.body.detail).toContain("issued for other filters")
        // A bookings cursor is not a tours cursor.
        yield* insertBooking({ operatorId: w.alpha })
        yield* insertBooking({ operatorId: w.alpha })
        const bookingsCursor = (yield* get("/api/v1/bookings?limit=1", key.token)).body.next_cursor
        expect(bookingsCursor).toEqual(expect.any(String))
        const crossed = yield* tours(key.token, `?cursor=${bookingsCursor}`)
        expect(crossed.status).toBe(400)
        expect(crossed.body.detail).toContain("issued for other filters")
        expect((yield* tours(key.token, `?cursor=${"x".repeat(201)}`)).status).toBe(400)
      }))
  })

  it.effect("answers match the OpenAPI document", () =>
    Effect.gen(function*() {
      const spec = yield* dereferencedSpec
      const w = yield* makeWorld
      const site = yield* createSite(w.alpha)
      const full = yield* insertTour({ operatorId: w.alpha, sites: [site], content: FULL })
      const bare = yield* insertTour({ operatorId: w.alpha, sites: [site] })
      yield* setSeason(full, { fromPriceMinor: 49900, currency: "NOK", known: true, nextAvailableDate: "2026-12-02" })
      yield* insertTour({ operatorId: w.alpha, sites: [site] })
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["tours:read"] })
      const reader = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      const cases: Array<[string, string, string | undefined]> = [
        ["/api/v1/tours", "/api/v1/tours", key.token],
        ["/api/v1/tours", "/api/v1/tours?limit=1&locale=nb", key.token],
        ["/api/v1/tours", "/api/v1/tours?limit=0", key.token],
        ["/api/v1/tours", "/api/v1/tours", reader.token],
        ["/api/v1/tours", "/api/v1/tours", undefined],
        ["/api/v1/tours", `/api/v1/tours?partner_id=${w.beta}`, key.token],
        ["/api/v1/tours/{id}", `/api/v1/tours/${full}`, key.token],
        ["/api/v1/tours/{id}", `/api/v1/tours/${full}?locale=nb`, key.token],
        ["/api/v1/tours/{id}", `/api/v1/tours/${bare}`, key.token],
        ["/api/v1/tours/{id}", "/api/v1/tours/00000000-0000-4000-8000-000000000000", key.token],
        ["/api/v1/tours/{id}", "/api/v1/tours/nope", key.token],
        ["/api/v1/tours/{id}", `/api/v1/tours/${full}`, reader.token],
        ["/api/v1/tours/{id}", `/api/v1/tours/${full}`, undefined]
      ]
      const statuses = new Set<number>()
      for (const [template, path, k] of cases) {
        const res = yield* get(path, k)
        statuses.add(res.status)
        conforms(spec, "get", template, res)
      }
      expect([...statuses].sort()).toEqual([200, 400, 401, 403, 404])
    }))
})
