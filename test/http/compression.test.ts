/**
 * Response compression (issue 17 item 12; src/http/compression.ts), read off the wire with
 * node:http (fetch would decode it silently): large JSON and the reference page are gzip- or
 * brotli-encoded when `Accept-Encoding` allows it, decode to the same bytes as the plain answer and
 * say `Vary: Accept-Encoding`; small answers and clients that ask for nothing get the plain body.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { chooseEncoding, COMPRESS_MIN_BYTES } from "../../src/http/compression.js"
import { DOCUMENT_CACHE_CONTROL, DOCUMENT_PATHS } from "../../src/http/documentCaching.js"
import { createKey, insertBooking, makeWorld } from "../support/fixtures.js"
import { decoded, onWire } from "../support/http.js"
import { testServer } from "../support/server.js"

describe("chooseEncoding", () => {
  it("prefers brotli, honours q-values and refusals", () => {
    expect(chooseEncoding(undefined)).toBeUndefined()
    expect(chooseEncoding("")).toBeUndefined()
    expect(chooseEncoding("identity")).toBeUndefined()
    expect(chooseEncoding("gzip, deflate, br")).toBe("br")
    expect(chooseEncoding("gzip")).toBe("gzip")
    expect(chooseEncoding("br;q=0.5, gzip")).toBe("gzip")
    expect(chooseEncoding("br;q=0, gzip;q=0")).toBeUndefined()
    expect(chooseEncoding("*")).toBe("br")
    expect(chooseEncoding("*;q=0.1, br;q=0")).toBe("gzip")
    expect(chooseEncoding("GZIP ; q=1")).toBe("gzip")
  })
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("response compression", (it) => {
  it.effect("a large JSON list: br or gzip as asked, the same JSON once decoded, Vary: Accept-Encoding", () =>
    Effect.gen(function*() {
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })
      for (let i = 0; i < 30; i++) yield* insertBooking({ operatorId: w.alpha })
      const path = "/api/v1/bookings?limit=30"
      const auth = { authorization: `Bearer ${key.token}` }

      const plain = yield* onWire(path, auth)
      expect(plain.status).toBe(200)
      expect(plain.bytes.length).toBeGreaterThan(COMPRESS_MIN_BYTES)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(plain.headers["vary"]).toContain("Accept-Encoding")

      for (const [accept, encoding] of [["gzip", "gzip"], ["gzip, deflate, br", "br"]] as const) {
        const wire = yield* onWire(path, { ...auth, "accept-encoding": accept })
        expect(wire.status).toBe(200)
        expect(wire.headers["content-encoding"], accept).toBe(encoding)
        expect(wire.headers["vary"]).toContain("Accept-Encoding")
        expect(wire.headers["content-type"]).toContain("application/json")
        expect(wire.bytes.length).toBeLessThan(plain.bytes.length / 3)
        expect(Number(wire.headers["content-length"])).toBe(wire.bytes.length)
        expect(JSON.parse(decoded(wire).toString("utf8")).data).toEqual(JSON.parse(plain.bytes.toString("utf8")).data)
      }
      // Refused encodings are not used.
      const refused = yield* onWire(path, { ...auth, "accept-encoding": "gzip;q=0, br;q=0" })
      expect(refused.headers["content-encoding"]).toBeUndefined()
    }))

  it.effect("a small answer is sent as it is", () =>
    Effect.gen(function*() {
      const small = yield* onWire("/healthz", { "accept-encoding": "gzip, br" })
      expect(small.status).toBe(200)
      expect(small.bytes.length).toBeLessThan(COMPRESS_MIN_BYTES)
      expect(small.headers["content-encoding"]).toBeUndefined()
      expect(small.headers["vary"] ?? "").not.toContain("Accept-Encoding")
    }))

  it.effect("the OpenAPI document and the HTML reference page are compressed too", () =>
    Effect.gen(function*() {
      const doc = yield* onWire("/api/v1/openapi.json", { "accept-encoding": "gzip" })
      expect(doc.headers["content-encoding"]).toBe("gzip")
      expect(JSON.parse(decoded(doc).toString("utf8")).openapi).toBe("3.1.0")
      const page = yield* onWire("/api/v1/docs", { "accept-encoding": "br" })
      expect(page.headers["content-encoding"]).toBe("br")
      expect(page.headers["content-security-policy"]).toContain("script-src")
      const html = decoded(page).toString("utf8")
      expect(html).toMatch(/^<!doctype html>/i)
      // The same bytes as the plain page.
      const plain = yield* onWire("/api/v1/docs")
      expect(html).toBe(plain.bytes.toString("utf8"))
    }))
  it.effect("the documents and reference pages are cacheable: one weak ETag per document, 304 when the client has it", () =>
    Effect.gen(function*() {
      for (const path of DOCUMENT_PATHS) {
        const first = yield* onWire(path, { "accept-encoding": "br" })
        expect(first.status, path).toBe(200)
        const tag = first.headers["etag"]
        expect(tag, path).toMatch(/^W\/"[A-Za-z0-9_-]{43}"$/)
        expect(first.headers["cache-control"]).toBe(DOCUMENT_CACHE_CONTROL)
        // The same tag with or without compression: it names the document, not the bytes sent.
        expect((yield* onWire(path)).headers["etag"]).toBe(tag)
        for (const ifNoneMatch of [tag!, `"other", ${tag}`, tag!.slice(2), "*"]) {
          const again = yield* onWire(path, { "if-none-match": ifNoneMatch, "accept-encoding": "br" })
          expect(again.status, `${path} ${ifNoneMatch}`).toBe(304)
          expect(again.bytes.length).toBe(0)
          expect(again.headers["etag"]).toBe(tag)
        }
        expect((yield* onWire(path, { "if-none-match": "W/\"stale\"" })).status).toBe(200)
      }
      // The two APIs' documents differ, so do their tags; an API answer gets none.
      expect((yield* onWire("/api/v1/openapi.json")).headers["etag"]).not.toBe(
        (yield* onWire("/api/quickbook/v1/openapi.json")).headers["etag"]
      )
      const health = yield* onWire("/healthz")
      expect(health.headers["etag"]).toBeUndefined()
      expect(health.headers["cache-control"] ?? "").not.toContain("public")
    }))
})
