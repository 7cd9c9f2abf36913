/** The quickbook error mapping on its own: decode errors, unknown failures and defects. */
import { HttpApiError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BodyTooLarge, MalformedBody, UnsupportedMediaType } from "../../src/http/requestBody.js"
import { MethodNotAllowed } from "../../src/http/routing.js"
import {
  CLERK_MESSAGE_VARIANTS,
  CLERK_MESSAGES,
  invalidFieldMessage,
  REQUEST_MESSAGES,
  wrongMethodMessage
} from "../../src/quickbook/clerkMessages.js"
import { handleQuickbook } from "../../src/quickbook/errorMapping.js"
import { QbBadRequest, QbNotFound } from "../../src/quickbook/errors.js"

const request = (headers: Record<string, string> = {}, path = "/api/quickbook/v1/tours") =>
  HttpServerRequest.fromWeb(new Request(`http://localhost${path}`, { headers }))

/** Runs the mapping as the server does, with the request in context. */
const run = (
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>,
  req: HttpServerRequest.HttpServerRequest
) => handleQuickbook(app, req).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, req))

const bodyOf = (res: HttpServerResponse.HttpServerResponse) =>
  JSON.parse(new TextDecoder().decode((res.body as any).body))

describe("quickbook error mapping", () => {
  it.effect("a request that does not decode answers 400 invalid_request naming the field, in the clerk's language", () =>
    Effect.gen(function*() {
      const decode = (issues: HttpApiError.HttpApiDecodeError["issues"]) =>
        Effect.fail(new HttpApiError.HttpApiDecodeError({ issues, message: "bad" }))
      const res = yield* run(
        decode([{ _tag: "Type", path: ["start", "date"], message: "Expected a date" }]),
        request({ "accept-language": "nb" })
      )
      expect(res.status).toBe(400)
      expect(res.headers["cache-control"]).toBe("no-store")
      expect(bodyOf(res)).toEqual({
        error: { code: "invalid_request", clerkMessage: invalidFieldMessage("start.date", false, "nb") }
      })
      expect(bodyOf(res).error.clerkMessage).toBe(
        "Datoen (start.date) er ugyldig. Bruk ÅÅÅÅ-MM-DD. Sjekk opplysningene og prøv igjen."
      )
      const missing = yield* run(
        decode([{ _tag: "Missing", path: ["customer", "email"], message: "is missing" }]),
        request()
      )
      expect(bodyOf(missing).error.clerkMessage).toBe(
        "The guest's email address (customer.email) is missing. Check the details and try again."
      )
      const whole = yield* run(decode([]), request())
      expect(bodyOf(whole).error.clerkMessage).toBe("The request body is not valid. Check the details and try again.")
      const unknown = yield* run(decode([{ _tag: "Type", path: ["guests", 3, "colour"], message: "?" }]), request())
      expect(bodyOf(unknown).error.clerkMessage).toBe(
        "The field guests.3.colour is not valid. Check the details and try again."
      )
      expect(invalidFieldMessage("guests.12.count", false, "en")).toBe(
        "A number of guests (guests.12.count) is not valid. Use 1 to 50 per line. Check the details and try again."
      )
    }))

  it.effect("a refusal with a variant or a field says so; without either, the code's message", () =>
    Effect.gen(function*() {
      const bad = (extra: Partial<ConstructorParameters<typeof QbBadRequest>[0]>) =>
        run(
          Effect.fail(new QbBadRequest({ code: "invalid_request", detail: "x", ...extra })),
          request({ "accept-language": "nb" })
        )
      expect(bodyOf(yield* bad({ variant: "too_many_guests", field: "guests" })).error.clerkMessage).toBe(
        CLERK_MESSAGE_VARIANTS.too_many_guests.nb
      )
      expect(bodyOf(yield* bad({ field: "date" })).error.clerkMessage).toBe(invalidFieldMessage("date", false, "nb"))
      expect(bodyOf(yield* bad({})).error.clerkMessage).toBe(CLERK_MESSAGES.invalid_request.nb)
      expect(CLERK_MESSAGES.invalid_request.en).not.toContain("sale")
    }))

  it.effect("bodies refused and methods not allowed answer their status with code invalid_request and their own message", () =>
    Effect.gen(function*() {
      const cases = [
        [new MalformedBody({ detail: "x", problem: "json" }), 400, REQUEST_MESSAGES.body_not_json.en],
        [new MalformedBody({ detail: "x", problem: "encoding" }), 400, REQUEST_MESSAGES.body_not_utf8.en],
        [new MalformedBody({ detail: "x", problem: "depth" }), 400, REQUEST_MESSAGES.body_too_deep.en],
        [new BodyTooLarge({ detail: "x", limitBytes: 1 }), 413, REQUEST_MESSAGES.body_too_large.en],
        [new UnsupportedMediaType({ detail: "x" }), 415, REQUEST_MESSAGES.body_not_json_type.en]
      ] as const
      for (const [error, status, clerkMessage] of cases) {
        const res = yield* run(Effect.fail(error), request())
        expect(res.status, error._tag).toBe(status)
        expect(bodyOf(res)).toEqual({ error: { code: "invalid_request", clerkMessage } })
      }
      const wrong = new MethodNotAllowed({
        detail: "x",
        method: "PUT",
        path: "/api/quickbook/v1/book",
        allow: ["POST"]
      })
      const res = yield* run(Effect.fail(wrong), request({ "accept-language": "nb" }))
      expect(res.status).toBe(405)
      expect(res.headers["allow"]).toBe("POST")
      expect(bodyOf(res)).toEqual({
        error: {
          code: "invalid_request",
          clerkMessage: wrongMethodMessage("PUT", "/api/quickbook/v1/book", ["POST"], "nb")
        }
      })
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
      const app = Effect.fail(
        new QbNotFound({ code: "not_found", detail: "no such sale", reference: "SVC-ABCDE12345" })
      )
      const res = yield* run(app, request())
      expect(res.status).toBe(404)
      expect(bodyOf(res).error).toEqual({
        code: "not_found",
        clerkMessage: CLERK_MESSAGES.not_found.en,
        reference: "SVC-ABCDE12345"
      })
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
