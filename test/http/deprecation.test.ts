import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer, OpenApi } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Schema } from "effect"
import { createServer } from "node:http"
import { apiHttpApp } from "../../src/http/apiApp.js"
import { deprecate } from "../../src/http/deprecation.js"
import { answerProblems } from "../../src/partner/problem.js"
import { call } from "../support/http.js"

const sunset = new Date("2027-06-30T00:00:00Z")
const since = new Date("2026-11-01T00:00:00Z")
const Old = deprecate("old-thing", { since, sunset, link: "/api/v1/docs/versioning.md" })

class DemoGroup extends HttpApiGroup.make("demo")
  .add(Old.mark(HttpApiEndpoint.get("old", "/old").addSuccess(Schema.Struct({ ok: Schema.Boolean }))))
  .add(HttpApiEndpoint.get("current", "/current").addSuccess(Schema.Struct({ ok: Schema.Boolean })))
{}
class DemoApi extends HttpApi.make("demo").add(DemoGroup) {}

const DemoLive = HttpApiBuilder.group(
  DemoApi,
  "demo",
  (h) => h.handle("old", () => Effect.succeed({ ok: true })).handle("current", () => Effect.succeed({ ok: true }))
)

class Base extends Context.Tag("Base")<Base, string>() {}
const ServerLive = Layer.effect(
  Base,
  Effect.map(HttpServer.HttpServer, (s) => `http://127.0.0.1:${s.address._tag === "TcpAddress" ? s.address.port : 0}`)
).pipe(
  Layer.provideMerge(Layer.unwrapScoped(Effect.map(
    apiHttpApp(HttpApiBuilder.api(DemoApi).pipe(Layer.provide(DemoLive), Layer.provide(Old.layer)), answerProblems),
    (app) => HttpServer.serve(app)
  ))),
  Layer.provide(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
)

layer(ServerLive, { excludeTestServices: true })("deprecation mechanism", (it) => {
  it.effect("a deprecated endpoint keeps working and sends Deprecation, Sunset and Link", () =>
    Effect.gen(function*() {
      const baseUrl = yield* Base
      const res = yield* call("/old", { baseUrl })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ ok: true })
      expect(res.headers.get("deprecation")).toBe(`@${since.getTime() / 1000}`)
      expect(res.headers.get("sunset")).toBe("Wed, 30 Jun 2027 00:00:00 GMT")
      expect(res.headers.get("link")).toBe(`</api/v1/docs/versioning.md>; rel="deprecation"`)
      const current = yield* call("/current", { baseUrl })
      expect(current.status).toBe(200)
      expect(current.headers.get("deprecation")).toBeNull()
      expect(current.headers.get("sunset")).toBeNull()
    }))

  it("is flagged in the OpenAPI document", () => {
    const spec = OpenApi.fromApi(DemoApi) as any
    expect(spec.paths["/old"].get.deprecated).toBe(true)
    expect(spec.paths["/old"].get.description).toContain("2027-06-30")
    expect(spec.paths["/current"].get.deprecated).toBeUndefined()
  })
})
