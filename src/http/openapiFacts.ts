/**
 * The document-wide facts and the clean-up both finished OpenAPI documents share (partner and
 * quickbook): where the API is served, who answers for it and under what terms, an integer `format`
 * on every integer, and none of the titles and descriptions Effect's schema filters write by default.
 */
import type { Json } from "./openapiSchemas.js"

/**
 * The document is the same on every deployment (tests and the reference page compare it whole), so
 * its one server is relative: the host that served the document, where every path (`/api/v1/...`)
 * is absolute. PUBLIC_URL names that host in the guides.
 */
const SERVERS = [{ url: "/", description: "The host that serves this document.", "x-internal": false }]

const LICENSE = {
  name: "Proprietary: use under your partner agreement",
  identifier: "LicenseRef-Proprietary"
}

/** What Effect's built-in filters write as `title` (`int`, `minLength(1)`, `between(1, 50)` …). */
const GENERATED_TITLE = /^(int|nonNegative|positive|negative|nonPositive|finite|nonNaN|unknown|UUID|\w+\(.*\))$/

/** What Effect's built-in filters write as `description`. */
const GENERATED_DESCRIPTION = [
  /^a Universally Unique Identifier$/,
  /^an integer$/,
  /^a (non-negative|positive|negative|non-positive|finite) number$/,
  /^a number (greater|less) than (or equal to )?-?[\d.]+$/,
  /^a number between -?[\d.]+ and -?[\d.]+$/,
  /^a string at (most|least) \d+ character\(s\) long$/,
  /^a string matching the pattern .*$/,
  /^a non empty string$/,
  /^an array of at (most|least) \d+ item\(s\)$/
]

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 }

const isInteger = (schema: Json) =>
  schema.type === "integer" || (Array.isArray(schema.type) && schema.type.includes("integer"))

/** int32 when the schema's bounds keep the value within 32 bits; int64 otherwise (money, counts, seconds). */
const integerFormat = (schema: Json) => {
  const min = schema.minimum ?? schema.exclusiveMinimum
  const max = schema.maximum ?? schema.exclusiveMaximum
  return typeof min === "number" && typeof max === "number" && min >= INT32.min && max <= INT32.max
    ? "int32"
    : "int64"
}

const cleanSchemas = (value: unknown): void => {
  if (Array.isArray(value)) {
    for (const item of value) cleanSchemas(item)
    return
  }
  if (typeof value !== "object" || value === null) return
  const node = value as Json
  if (typeof node.title === "string" && GENERATED_TITLE.test(node.title)) delete node.title
  if (typeof node.description === "string" && GENERATED_DESCRIPTION.some((re) => re.test(node.description))) {
    delete node.description
  }
  if (isInteger(node) && node.format === undefined) node.format = integerFormat(node)
  // Schema.UUID's pattern admits 36 characters exactly; the document says so where the linters look.
  if (node.type === "string" && node.format === "uuid" && node.maxLength === undefined) node.maxLength = 36
  for (const child of Object.values(node)) cleanSchemas(child)
}

/** Adds `servers`, `info.contact` and `info.license`, and cleans every schema of the document. */
export const withDocumentFacts = (spec: Json, contact: Json): Json => {
  spec.servers = SERVERS
  spec.info = { ...spec.info, contact, license: LICENSE }
  cleanSchemas(spec.paths)
  cleanSchemas(spec.components)
  return spec
}

/**
 * The headers `rateLimitHeaders` (src/http/RateLimiter.ts) puts on every answer given once the
 * limiter has counted the request; `policies` says which policies (`"default";q=300;w=60`) exist.
 */
export const rateLimitHeaderDocs = (policies: string): Json => ({
  "RateLimit-Policy": {
    description: `IETF draft-11: ${policies}.`,
    schema: { type: "string", maxLength: 100 }
  },
  "RateLimit": {
    description: "IETF draft-11: `\"<policy>\";r=<remaining>;t=<seconds to reset>`.",
    schema: { type: "string", maxLength: 100 }
  },
  "RateLimit-Limit": {
    description: "Requests allowed per window.",
    schema: { type: "integer", format: "int32", minimum: 1, maximum: 1_000_000 }
  },
  "RateLimit-Remaining": {
    description: "Requests left in the current window.",
    schema: { type: "integer", format: "int32", minimum: 0, maximum: 1_000_000 }
  },
  "RateLimit-Reset": {
    description: "Seconds until the window resets.",
    schema: { type: "integer", format: "int32", minimum: 0, maximum: 86_400 }
  }
})
