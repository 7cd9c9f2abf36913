import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { inject } from "vitest"
import { readSection, SECTIONS } from "../../src/http/docs/routes.js"
import { get } from "../support/http.js"
import { expectReferenceShowsServedDocument } from "../support/openapi.js"
import { TestServer, testServer } from "../support/server.js"

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("docs", (it) => {
  it.effect("every markdown section is served, and the index links them", () =>
    Effect.gen(function*() {
      for (const name of SECTIONS) {
        const res = yield* get(`/api/v1/docs/${name}.md`)
        expect(res.status, name).toBe(200)
        expect(res.headers.get("content-type")).toContain("text/markdown")
        expect(res.text).toBe(readSection(name))
        expect(res.text.length, `${name}.md has content`).toBeGreaterThan(200)
      }
      const index = yield* get("/api/v1/docs/index.md")
      for (const name of SECTIONS) expect(index.text).toContain(`/api/v1/docs/${name}.md`)
    }))

  it.effect("an unknown section is a 404 problem", () =>
    Effect.gen(function*() {
      const res = yield* get("/api/v1/docs/secrets.md")
      expect(res.status).toBe(404)
      expect(res.headers.get("content-type")).toBe("application/problem+json")
    }))

  it.effect("llms-full.txt holds every section and the endpoint index", () =>
    Effect.gen(function*() {
      const res = yield* get("/api/v1/llms-full.txt")
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toContain("text/plain")
      for (const name of SECTIONS) expect(res.text).toContain(readSection(name))
      expect(res.text).toContain("GET /api/v1/bookings/{id}")
      expect(res.text).toContain("GET /api/v1/manifest (date, partner_id?)")
    }))

  it.effect("the changelog and the interactive reference are served", () =>
    Effect.gen(function*() {
      const changelog = yield* get("/api/v1/changelog")
      expect(changelog.status).toBe(200)
      expect(changelog.text).toBe(readSection("changelog"))
      // The reference shows the finished document as served: errors as problem+json, no internal schemas.
      const { document, page } = yield* expectReferenceShowsServedDocument("/api/v1/docs", "/api/v1/openapi.json")
      expect(page.text).toContain("Partner API")
      expect(document.paths["/api/v1/bookings/{id}"].get.responses["404"].content).toHaveProperty([
        "application/problem+json"
      ])
      for (const internal of ["HttpApiDecodeError", "Issue", "PropertyKey"]) {
        expect(Object.keys(document.components.schemas)).not.toContain(internal)
      }
    }))

  it.effect("health endpoints answer without a key", () =>
    Effect.gen(function*() {
      expect((yield* get("/healthz")).body).toEqual({ status: "ok" })
      expect((yield* get("/readyz")).body).toEqual({ status: "ok" })
    }))
})

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("readiness", (it) => {
  it.effect("/readyz answers 503 once the database is gone, while /healthz still answers", () =>
    Effect.gen(function*() {
      const { databaseUrl } = yield* TestServer
      expect((yield* get("/readyz")).status).toBe(200)
      const name = new URL(databaseUrl).pathname.slice(1)
      const admin = new pg.Client({ connectionString: inject("adminDatabaseUrl") })
      yield* Effect.promise(async () => {
        await admin.connect()
        await admin.query(`DROP DATABASE "${name}" WITH (FORCE)`)
        await admin.end()
      })
      const res = yield* get("/readyz")
      expect(res.status).toBe(503)
      expect(res.body).toEqual({ status: "unavailable" })
      expect((yield* get("/healthz")).status).toBe(200)
    }))
})
