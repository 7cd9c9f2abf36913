/**
 * Values from the documents' JSON schemas: `valid(schema)` an arbitrary of values the schema accepts
 * (as far as a schema says: the service may still refuse a well-formed id it does not know), and
 * `broken(schema)` one that mostly yields values it refuses (wrong types, out of bounds, impossible
 * dates, unicode, huge values), plus hostile values a schema may accept.
 */
import fc from "fast-check"

type Schema = Record<string, any>

const utcDay = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10)

/** Real calendar days near today (most reads filter by them) and a few far ones. */
const day = fc.oneof(
  fc.integer({ min: -400, max: 400 }).map(utcDay),
  fc.constantFrom("2024-02-29", "2026-12-31", "2000-01-01", "2099-12-31")
)

const byFormat: Record<string, fc.Arbitrary<unknown>> = {
  date: day,
  "date-time": fc.integer({ min: -400, max: 400 }).map((d) => new Date(Date.now() + d * 86_400_000).toISOString()),
  uuid: fc.uuid(),
  email: fc.constantFrom("kari@example.com", "ola.nordmann+desk@example.no")
}

/** Strings a field refuses or must survive: impossible dates, unicode, control characters, injection. */
export const NASTY_STRINGS: ReadonlyArray<string> = [
  "",
  " ",
  "2026-02-30",
  "2027-02-29",
  "2026-13-01",
  "2026-00-10",
  "0000-01-01",
  "9999-12-31",
  "2026-02-30T10:00:00Z",
  "2026-11-21T24:00:00Z",
  "24:00",
  "9:60",
  "-1",
  "0",
  "1e309",
  "NaN",
  "Infinity",
  "99999999999999999999999",
  "0x10",
  "1.5",
  "true",
  "null",
  "[]",
  "{}",
  "💥🇳🇴",
  "Ærø Ødegård Åsane",
  "\u202eevil",
  "a\u0000b",
  "\ud800",
  "line\nbreak",
  "'; DROP TABLE bookings; --",
  "<script>alert(1)</script>",
  "../../etc/passwd",
  "%00",
  "%",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-fffffffffffff"
]

const huge = fc.constantFrom("x".repeat(10_000), "é".repeat(3_000), "9".repeat(400))

const nastyString = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...NASTY_STRINGS) }, {
  weight: 1,
  arbitrary: huge
}, { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) })

/** A JSON value of the wrong shape for most fields. */
const wrongJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 63), 1e308, [], {}, [null], { a: {} }),
  nastyString
)

const pick = (schema: Schema): Schema => {
  const alternatives = schema.anyOf ?? schema.oneOf
  return alternatives ? alternatives[0] : schema
}

/**
 * Values the world holds for a parameter or field of this name (ids that exist, another tenant's);
 * the name "" holds whole request bodies (or tool arguments). The arrays are read when a request is
 * made, so a campaign can add what the answers return (a quote's reference, a hold) as it goes.
 */
export type Pool = Readonly<Record<string, ReadonlyArray<unknown>>>

/** A value for the field `name`: mostly one the world holds when it holds some, else from the schema. */
export const named = (name: string, schema: Schema | undefined, pool: Pool, depth = 0): fc.Arbitrary<unknown> => {
  const held = pool[name]
  const fromSchema = valid(schema, pool, depth)
  if (!held) return fromSchema
  const fromHeld = fc.nat().chain((n) => held.length > 0 ? fc.constant(held[n % held.length]) : fromSchema)
  return fc.oneof({ weight: 4, arbitrary: fromHeld }, { weight: 1, arbitrary: fromSchema })
}

/** Values `schema` accepts. */
export const valid = (schema: Schema | undefined, pool: Pool = {}, depth = 0): fc.Arbitrary<unknown> => {
  if (!schema || depth > 6) return fc.constant(null)
  if ("const" in schema) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...(schema.enum as Array<unknown>))
  const alternatives: Array<Schema> | undefined = schema.anyOf ?? schema.oneOf
  if (alternatives) return fc.oneof(...alternatives.map((s) => valid(s, pool, depth + 1)))
  if (schema.allOf) return valid(Object.assign({}, ...schema.allOf), pool, depth + 1)
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type
  switch (type) {
    case "string": {
      if (schema.format && byFormat[schema.format]) return byFormat[schema.format]!
      if (schema.pattern) {
        try {
          return fc.stringMatching(new RegExp(schema.pattern)).filter((s) =>
            s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity)
          )
        } catch {
          // A pattern JavaScript cannot compile: fall through to plain strings.
        }
      }
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 20, 40) }).filter(
        (s) => s.length >= (schema.minLength ?? 0)
      )
    }
    case "integer":
      return fc.integer({
        min: Math.ceil(schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -1000)),
        max: Math.floor(schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : 1000))
      })
    case "number":
      return fc.double({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000, noNaN: true })
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array":
      return fc.array(valid(schema.items, pool, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3)
      })
    case "object":
    case undefined: {
      if (!schema.properties) return fc.constant({})
      const required = new Set<string>(schema.required ?? [])
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, sub] of Object.entries<Schema>(schema.properties)) {
        model[name] = named(name, sub, pool, depth + 1)
      }
      return fc.record(model, { requiredKeys: [...required] })
    }
    default:
      return fc.constant(null)
  }
}

/** Values of the wrong type, out of bounds or hostile for `schema`. */
export const broken = (schema: Schema | undefined): fc.Arbitrary<unknown> => {
  const s = schema ? pick(schema) : {}
  const near: Array<unknown> = []
  if (typeof s.minimum === "number") near.push(s.minimum - 1, s.minimum - 0.5)
  if (typeof s.maximum === "number") near.push(s.maximum + 1, s.maximum * 1000)
  if (typeof s.minLength === "number" && s.minLength > 0) near.push("x".repeat(s.minLength - 1))
  if (typeof s.maxLength === "number") near.push("x".repeat(s.maxLength + 1))
  if (typeof s.maxItems === "number") near.push(Array.from({ length: s.maxItems + 1 }, () => null))
  return near.length > 0
    ? fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...near) }, { weight: 3, arbitrary: wrongJson })
    : wrongJson
}

/** A value as it travels in a query, path or header: JSON-ish values as text. */
export const asText = (value: unknown): string =>
  typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value)
