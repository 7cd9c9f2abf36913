/** Checks live responses against the served OpenAPI document. */
import SwaggerParser from "@apidevtools/swagger-parser"
import { expect } from "@effect/vitest"
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import { Effect } from "effect"
import { get, type Reply } from "./http.js"

const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
;(addFormats as any)(ajv)

/** The served document with every `$ref` resolved. */
export const dereferencedSpec = Effect.gen(function*() {
  const raw = (yield* get("/api/v1/openapi.json")).body
  return yield* Effect.promise(() => SwaggerParser.dereference(structuredClone(raw)))
})

/** Checks a live response against the document: status listed, media type and body schema. */
export const conforms = (spec: any, method: string, template: string, res: Reply) => {
  const op = spec.paths[template]?.[method]
  expect(op, `${method} ${template} in the document`).toBeDefined()
  const documented = op.responses[String(res.status)]
  expect(documented, `${method} ${template} documents ${res.status}`).toBeDefined()
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!
  const media = documented.content?.[type]
  expect(media, `${method} ${template} ${res.status} documents ${type}`).toBeDefined()
  const validate = ajv.compile(media.schema)
  const ok = validate(res.body)
  expect(ok, `${method} ${template} ${res.status}: ${JSON.stringify(validate.errors)}`).toBe(true)
}

/**
 * The reference page at `pagePath` (Scalar) and the document served at `documentPath`: the page
 * embeds that very document, so what a developer reads is what the API serves.
 */
export const expectReferenceShowsServedDocument = (pagePath: string, documentPath: string) =>
  Effect.gen(function*() {
    const page = yield* get(pagePath)
    expect(page.status, page.text.slice(0, 200)).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    const embedded = /<script id="api-reference" type="application\/json">([\s\S]*?)<\/script>/.exec(page.text)
    expect(embedded, "the page embeds a document").not.toBeNull()
    const served = (yield* get(documentPath)).body
    expect(JSON.parse(embedded![1]!)).toEqual(served)
    return { page, document: served as any }
  })
