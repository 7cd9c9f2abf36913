/**
 * Hot-path success bodies. HttpApi would encode a handler's result through the endpoint's success
 * schema, a second full validation of data the types already guarantee; for list and detail
 * responses that pass is a measurable share of the CPU per request (see bench/README.md). The body
 * is therefore serialised directly, into the HttpServerResponse a handler may return in place of
 * its success value. `schema`, the endpoint's success schema, types the body at compile time, and
 * test/partner/openapi.test.ts checks live responses against the OpenAPI document.
 */
import { HttpServerResponse } from "@effect/platform"
import type { Schema } from "effect"

export const jsonBody = <A, I>(_schema: Schema.Schema<A, I>, body: NoInfer<A>): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(body)
