/**
 * Requests generated from an OpenAPI operation: a valid one (values from the schemas and the world's
 * ids), or one broken in exactly one place: a parameter (wrong type, bounds, format, hostile text,
 * missing, repeated), a body field (wrong, missing, unknown), or the body itself (wrong content type,
 * malformed, oversized, duplicate keys), sent with one kind of key.
 */
import fc from "fast-check"
import { asText, broken, named, NASTY_STRINGS, type Pool } from "./schemaValues.js"

export interface Operation {
  readonly method: string
  readonly template: string
  readonly op: Record<string, any>
}

export interface FuzzRequest {
  readonly operation: Operation
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
  /** What was broken ("valid" for a valid request), for the report. */
  readonly mutation: string
  readonly key: string
}

/** The keys of a world, by kind; `undefined` sends no Authorization header. */
export type Keys = Readonly<Record<string, string | undefined>>

/** Every operation of a dereferenced document. */
export const operations = (spec: any): Array<Operation> =>
  Object.entries<any>(spec.paths).flatMap(([template, item]) =>
    ["get", "post", "put", "patch", "delete"].filter((m) => item[m]).map((method) => ({
      method,
      template,
      op: item[method]
    }))
  )

interface Param {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required?: boolean
  readonly schema?: Record<string, any>
}

const paramsOf = (o: Operation): Array<Param> =>
  (o.op.parameters ?? []).filter((p: { in: string }) => ["path", "query", "header"].includes(p.in))
const jsonSchemaOf = (o: Operation) => o.op.requestBody?.content?.["application/json"]?.schema

type Values = Record<string, string | undefined>

/** The body-level breakages: what arrives is not the JSON object the operation takes. */
const BODY_BREAKS: ReadonlyArray<[string, (json: string) => { body?: string; type?: string }]> = [
  ["content-type text/plain", (json) => ({ body: json, type: "text/plain" })],
  ["content-type form", () => ({ body: "a=1&b=2", type: "application/x-www-form-urlencoded" })],
  ["content-type xml", () => ({ body: "<a>1</a>", type: "application/xml" })],
  ["no content-type", (json) => ({ body: json, type: "" })],
  ["no body", () => ({ type: "application/json" })],
  ["empty body", () => ({ body: "", type: "application/json" })],
  ["malformed json", (json) => ({ body: json.slice(0, Math.max(1, json.length - 1)), type: "application/json" })],
  ["json garbage", () => ({ body: "{\"a\":", type: "application/json" })],
  ["json with BOM", (json) => ({ body: "\ufeff" + json, type: "application/json" })],
  ["json null", () => ({ body: "null", type: "application/json" })],
  ["json array", (json) => ({ body: `[${json}]`, type: "application/json" })],
  ["json string", () => ({ body: "\"hello\"", type: "application/json" })],
  ["json number", () => ({ body: "1e999", type: "application/json" })],
  ["duplicate keys", (json) => ({ body: json.replace(/^\{/, "{\"a\":1,\"a\":2,"), type: "application/json" })],
  ["deep nesting", () => ({ body: "[".repeat(5000) + "]".repeat(5000), type: "application/json" })],
  [
    "oversized body (70 KiB)",
    (json) => ({ body: json.replace(/^\{/, `{"padding":"${"x".repeat(70 * 1024)}",`), type: "application/json" })
  ],
  ["oversized body (2 MiB)", () => ({ body: `{"a":"${"x".repeat(2 * 1024 * 1024)}"}`, type: "application/json" })],
  ["charset latin1", (json) => ({ body: json, type: "application/json; charset=iso-8859-1" })]
]

const wellFormed = (s: string) =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd")

const fill = (template: string, values: Values) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    // A lone surrogate has no UTF-8 form: sent as U+FFFD, as URLSearchParams does in the query.
    encodeURIComponent(wellFormed(values[name] ?? "")))

const build = (
  o: Operation,
  params: Array<Param>,
  values: Values,
  extraQuery: Array<[string, string]>,
  key: [string, string | undefined],
  body: { body?: string; type?: string } | undefined,
  mutation: string,
  extraHeaders: Readonly<Record<string, string>>
): FuzzRequest => {
  const query = new URLSearchParams()
  const headers: Record<string, string> = { ...extraHeaders }
  for (const p of params) {
    const v = values[p.name]
    if (v === undefined) continue
    if (p.in === "query") query.append(p.name, v)
    if (p.in === "header") headers[p.name.toLowerCase()] = v
  }
  for (const [k, v] of extraQuery) query.append(k, v)
  if (key[1] !== undefined) headers.authorization = `Bearer ${key[1]}`
  if (body?.type) headers["content-type"] = body.type
  const qs = query.toString()
  return {
    operation: o,
    method: o.method.toUpperCase(),
    path: fill(o.template, values) + (qs ? `?${qs}` : ""),
    headers,
    ...(body?.body !== undefined ? { body: body.body } : {}),
    mutation,
    key: key[0]
  }
}

/**
 * Requests for operation `o`: about a third valid, the rest broken in one place each; `headers` are
 * sent with every request (what no parameter documents, e.g. a browser's Origin).
 */
export const requestFor = (
  o: Operation,
  keys: Keys,
  pool: Pool,
  headers: Readonly<Record<string, string>> = {}
): fc.Arbitrary<FuzzRequest> => {
  const params = paramsOf(o)
  const bodySchema = jsonSchemaOf(o)
  const generated = fc.record(
    Object.fromEntries(params.map((p) => [
      p.name,
      p.required ? named(p.name, p.schema, pool).map(asText).filter((v) => p.in !== "path" || v !== "") : fc.option(
        named(p.name, p.schema, pool).map(asText),
        { nil: undefined, freq: 2 }
      )
    ]))
  ) as fc.Arbitrary<Values>
  // Without a body, the pool's "" holds whole parameter sets (a signed link's file, exp and sig belong together).
  const wholeParams = bodySchema ? undefined : pool[""] as ReadonlyArray<Values> | undefined
  const valuesArb = wholeParams
    ? fc.oneof(
      {
        weight: 4,
        arbitrary: fc.nat().chain((n) =>
          wholeParams.length > 0 ? fc.constant(wholeParams[n % wholeParams.length]!) : generated
        )
      },
      { weight: 1, arbitrary: generated }
    )
    : generated
  const bodyArb = bodySchema ? named("", bodySchema, pool) : fc.constant(undefined)
  const keyEntries = Object.entries(keys)
  const keyArb = fc.oneof(
    { weight: 6, arbitrary: fc.constant(keyEntries[0]!) },
    { weight: 2, arbitrary: fc.constantFrom(...keyEntries) }
  )
  const kinds = ["valid", "param", "duplicate", "unknown query", ...(bodySchema ? ["field", "body"] : [])]
  return fc.tuple(
    valuesArb,
    bodyArb,
    keyArb,
    fc.oneof({ weight: 3, arbitrary: fc.constant("valid") }, { weight: 5, arbitrary: fc.constantFrom(...kinds) }),
    fc.nat(),
    broken(undefined),
    fc.constantFrom(...NASTY_STRINGS)
  ).chain(([values, bodyValue, key, kind, n, wrong, nasty]) => {
    const json = bodyValue === undefined ? undefined : { body: JSON.stringify(bodyValue), type: "application/json" }
    const send = (
      v: Values,
      b: { body?: string; type?: string } | undefined,
      extra: Array<[string, string]>,
      mutation: string
    ) => fc.constant(build(o, params, v, extra, key, b, mutation, headers))
    if (kind === "param" && params.length > 0) {
      const p = params[n % params.length]!
      const bad = broken(p.schema).map(asText).filter((v) => p.in !== "path" || v !== "")
      const brokenOne = bad.map((v) =>
        build(o, params, { ...values, [p.name]: v }, [], key, json, `${p.in} ${p.name} broken`, headers)
      )
      // A path parameter cannot be missing: an empty segment is another route.
      return p.in === "path"
        ? brokenOne
        : fc.oneof(brokenOne, send({ ...values, [p.name]: undefined }, json, [], `${p.in} ${p.name} missing`))
    }
    if (kind === "duplicate" && params.some((p) => p.in === "query")) {
      const qs = params.filter((p) => p.in === "query")
      const p = qs[n % qs.length]!
      return named(p.name, p.schema, {}).map((other) =>
        build(o, params, values, [[p.name, asText(other)]], key, json, `query ${p.name} repeated`, headers)
      )
    }
    if (kind === "unknown query") return send(values, json, [["unexpected", nasty]], "unknown query parameter")
    if (kind === "field" && bodyValue && typeof bodyValue === "object" && bodySchema) {
      const names = Object.keys(bodySchema.properties ?? bodySchema.anyOf?.[0]?.properties ?? {})
      if (names.length > 0) {
        const field = names[n % names.length]!
        const changed: Record<string, unknown> = { ...(bodyValue as object) }
        const how = n % 5
        if (how === 0) delete changed[field]
        else if (how === 1) changed[`${field}_extra`] = nasty
        else changed[field] = wrong
        const what = how === 0 ? "missing" : how === 1 ? "beside an unknown field" : "broken"
        return send(values, { body: JSON.stringify(changed), type: "application/json" }, [], `field ${field} ${what}`)
      }
    }
    if (kind === "body" && json) {
      const [what, breakIt] = BODY_BREAKS[n % BODY_BREAKS.length]!
      return send(values, breakIt(json.body), [], what)
    }
    return send(values, json, [], "valid")
  })
}
