/**
 * Hot-path success bodies. HttpApi would encode a handler's result through the endpoint's success
 * schema, a second full validation of data the types already guarantee; for list and detail
 * responses that pass is a measurable share of the CPU per request (see bench/README.md). The body
 * is therefore serialised directly. The value is still typed by the endpoint's schema at compile
 * time, and test/partner/openapi.test.ts checks live responses against the OpenAPI document.
 */
import { HttpServerResponse } from "@effect/platform"

export const jsonBody = <A>(body: A): A => HttpServerResponse.unsafeJson(body) as unknown as A
