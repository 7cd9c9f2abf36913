/** Query and path parameter schemas shared by the endpoints, with messages that name the rule. */
import { Schema } from "effect"

/** What Schema.UUID accepts, as the document says it (any case, with dashes). */
const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"

/** A whole number given in decimal digits only (no signs, exponents, spaces or hex). */
export const intParam = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.pattern(/^\d{1,9}$/, { message: () => `must be a whole number from ${min} to ${max}` }),
    Schema.compose(Schema.NumberFromString),
    Schema.filter((n) => n >= min && n <= max, { message: () => `must be a whole number from ${min} to ${max}` })
  ).annotations({ jsonSchema: { type: "integer", minimum: min, maximum: max } })

/**
 * The same rule as `intParam` for a JSON number (the assistant's tools take the REST parameters as
 * JSON arguments): a whole number from `min` to `max`.
 */
export const intValue = (min: number, max: number) =>
  Schema.Int.pipe(Schema.between(min, max)).annotations({
    message: () => ({ message: `must be a whole number from ${min} to ${max}`, override: true }),
    jsonSchema: { type: "integer", minimum: min, maximum: max }
  })

/** One of a fixed set of words, with a message that lists them. */
export const oneOf = <const L extends ReadonlyArray<string>>(values: L) =>
  Schema.String.pipe(
    Schema.filter((s): s is L[number] => values.includes(s), { message: () => `must be one of ${values.join(", ")}` })
  ).annotations({ jsonSchema: { type: "string", enum: [...values] } })

/** A cursor is two base64url parts joined by a dot (src/http/cursor.ts); anything else was not issued here. */
export const Cursor = Schema.String.pipe(
  Schema.maxLength(200, { message: () => "must be at most 200 characters" }),
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.pattern(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, { message: () => "is not a cursor this API issued" })
).annotations({ description: "`next_cursor` from the previous page (opaque; at most 200 characters)." })

export const UuidPath = Schema.UUID.annotations({
  message: () => "must be a UUID",
  jsonSchema: { type: "string", format: "uuid", pattern: UUID_PATTERN, minLength: 36, maxLength: 36 }
})

/**
 * An operator id (a UUID, as `partners[].id` of GET /me). Any other id of that shape, a UUID or not,
 * is one the key does not act for: 404, like another tenant's (the tests of every list hold it);
 * only what cannot be an id at all (too long, other characters) is a bad request.
 */
export const PartnerId = Schema.String.pipe(
  Schema.pattern(/^[0-9A-Za-z-]{1,36}$/, { message: () => "must be an operator id (a UUID from GET /me)" })
).annotations({
  description: "Narrow to one of the key's operators (`partners[].id` of GET /me); an id outside the key answers 404.",
  jsonSchema: { type: "string", pattern: "^[0-9A-Za-z-]{1,36}$", maxLength: 36 }
})

/** The path of an endpoint on one resource: `…/:id`, a UUID. */
export const IdPath = Schema.Struct({ id: UuidPath })
