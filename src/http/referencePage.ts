/**
 * An API's interactive reference (Scalar, as HttpApiScalar serves it) showing exactly the document
 * the API serves at its openapi.json: the finished one (problem+json errors, scopes, headers), not
 * the bare document HttpApi generates from the definitions. `document` is the function that
 * finishes it (src/partner/openapi.ts, src/quickbook/openapi.ts).
 */
import { HttpApi, HttpApiScalar, OpenApi } from "@effect/platform"
import { Context, Layer } from "effect"
import type { Json } from "./openapiSchemas.js"

export const referencePageLayer = (
  path: `/${string}`,
  api: HttpApi.HttpApi.Any,
  document: () => Json
) =>
  HttpApiScalar.layer({ path }).pipe(
    Layer.provide(Layer.sync(HttpApi.Api, () => ({
      api: (api as HttpApi.HttpApi.AnyWithProps).annotate(
        OpenApi.Transform,
        () => document() as OpenApi.OpenAPISpec
      ) as unknown as HttpApi.Api["Type"]["api"],
      context: Context.empty()
    })))
  )
