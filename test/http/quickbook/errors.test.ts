/** The quickbook error mapping on its own: decode errors, unknown failures and defects. */
import { HttpApiError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CLERK_MESSAGES, QbNotFound } from "../../../src/domain/quickbookErrors.js"
import { handleQuickbook } from "../../../src/http/quickbook/errors.js"

const request = (headers: Record<string, string> = {}, path = "/api/quickbook/v1/tours") =>
  HttpServerRequest.fromWeb(new Request(`http://localhost${path}`, { headers }))

/** Runs the mapping as the server does, with the request in context. */
const run = (app: unknown, req: HttpServerRequest.HttpServerRequest) =>
  handleQuickbook(app as any, req).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, req))

const bodyOf = (res: HttpServerResponse.HttpServerResponse) =>
  JSON.parse(new TextDecoder().decode((res.body as any).body))

describe("quickbook error mapping", () => {
  it.effect("a request that does not decode answers 400 invalid_request", () =>
    Effect.gen(function*() {
      const app = Effect.fail(new HttpApiError.HttpApiDecodeError({ issues: [], message: "bad date" }))
      const res = yield* run(app, request({ "accept-language": "nb" }))
      expect(res.status).toBe(400)
      expect(res.headers["cache-control"]).toBe("no-store")
      expect(bodyOf(res)).toEqual({ error: { code: "invalid_request", clerkMessage: CLERK_MESSAGES.invalid_request.nb } })
    }))

  it.effect("a defect answers 500 internal without internals", () =>
    Effect.gen(function*() {
      const res = yield* run(Effect.die(new Error("secret stack")), request())
      expect(res.status).toBe(500)
      const body = bodyOf(res)
      expect(body).toEqual({ error: { code: "internal", clerkMessage: CLERK_MESSAGES.internal.en } })
      expect(JSON.stringify(body)).not.toContain("secret stack")
    }))

  it.effect("the sale reference is passed on when the failure names one", () =>
    Effect.gen(function*() {
      const app = Effect.fail(new QbNotFound({ code: "not_found", detail: "no such sale", reference: "SVC-ABCDE12345" }))
      const res = yield* run(app, request())
      expect(res.status).toBe(404)
      expect(bodyOf(res).error).toEqual({ code: "not_found", clerkMessage: CLERK_MESSAGES.not_found.en, reference: "SVC-ABCDE12345" })
    }))

  it.effect("a key in the URL answers 401 before the app runs", () =>
    Effect.gen(function*() {
      let ran = false
      const app = Effect.sync(() => {
        ran = true
        return HttpServerResponse.empty()
      })
      const res = yield* run(app, request({}, "/api/quickbook/v1/tours?t=svcqb%5Ftest%5Fabc"))
      expect(res.status).toBe(401)
      expect(res.headers["www-authenticate"]).toBe(`Bearer realm="svc-quickbook"`)
      expect(ran).toBe(false)
    }))
})
