/**
 * The document-wide facts both served OpenAPI documents carry (src/http/openapiFacts.ts) and what
 * the linters (npm run lint:openapi) check on them: a server, contact and license; tags with human
 * names and descriptions; an integer format on every integer; none of Effect's default filter titles
 * or descriptions; and the input bounds the server enforces (tested through the server in the
 * features' tests: cancel reason, check-in present, partner_id, cursor).
 */
import { describe, expect, it } from "@effect/vitest"
import { partnerOpenApi } from "../../src/partner/openapi.js"
import { quickbookOpenApi } from "../../src/quickbook/openapi.js"

/** Every object in the document, with its JSON path. */
const nodes = (value: unknown, at = "$"): Array<[string, any]> =>
  typeof value !== "object" || value === null
    ? []
    : [
      [at, value] as [string, any],
      ...Object.entries(value).flatMap(([k, v]) => nodes(v, `${at}.${k}`))
    ]

describe.each([
  ["partner", partnerOpenApi()],
  ["quickbook", quickbookOpenApi()]
])("the %s document", (_name, doc: any) => {
  it("names one relative server, a contact and a license", () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: "/" })])
    expect(doc.info.contact.name).toEqual(expect.any(String))
    expect(doc.info.license).toMatchObject({ name: expect.any(String), identifier: "LicenseRef-Proprietary" })
  })

  it("tags every operation with a human name that has a description", () => {
    const described = new Map(doc.tags.map((t: any) => [t.name, t.description]))
    for (const tag of doc.tags) {
      // Words a reader says (`Payment links`), not identifiers (`paymentLinks`, `invoice_files`).
      expect(tag.name, tag.name).toMatch(/^[A-Z][A-Za-z -]*$/)
      expect(tag.name, tag.name).not.toMatch(/[a-z][A-Z]/)
      expect(tag.description, tag.name).toEqual(expect.any(String))
    }
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) for (const tag of op.tags) expect(described.has(tag), tag).toBe(true)
    }
  })

  it("gives every integer a format and shows none of Effect's default filter titles or descriptions", () => {
    for (const [at, node] of nodes(doc)) {
      if (node.type === "integer") expect(["int32", "int64"], at).toContain(node.format)
      if (typeof node.title === "string") expect(node.title, at).not.toMatch(/^(int|nonNegative|\w+\(.*\))$/)
      if (typeof node.description === "string") {
        expect(node.description, at).not.toMatch(/^(a Universally Unique Identifier|an integer|a string at most)/)
      }
    }
  })

  it("bounds every input integer (limit 1 to 100 where paged)", () => {
    for (const item of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(item)) {
        for (const p of op.parameters ?? []) {
          if (p.schema?.type === "integer") {
            expect(p.schema.minimum, p.name).toEqual(expect.any(Number))
            expect(p.schema.maximum, p.name).toEqual(expect.any(Number))
          }
          if (p.name === "limit") expect(p.schema).toMatchObject({ minimum: 1, maximum: 100 })
        }
      }
    }
  })
})

describe("input bounds as documented", () => {
  it("cancel reason 3 to 500, check-in present 0 to 2^31 - 1, partner_id at most 36 id characters, cursor two base64url parts", () => {
    const doc: any = partnerOpenApi()
    const schemas = doc.components.schemas
    expect(schemas.CancelRequest.properties.reason).toMatchObject({ minLength: 3, maxLength: 500 })
    expect(schemas.CheckinRequest.properties.present.anyOf[0]).toMatchObject({ minimum: 0, maximum: 2 ** 31 - 1 })
    const bookings = doc.paths["/api/v1/bookings"].get.parameters
    const param = (name: string) => bookings.find((p: any) => p.name === name).schema
    expect(param("partner_id")).toMatchObject({ maxLength: 36, pattern: "^[0-9A-Za-z-]{1,36}$" })
    expect(param("cursor")).toMatchObject({ maxLength: 200, pattern: "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$" })
  })

  it("quickbook: the quote's guests 1 to 10 entries of 1 to 50, the terminal header a UUID", () => {
    const doc: any = quickbookOpenApi()
    const guests = doc.components.schemas.QuoteRequest.properties.guests
    expect(guests).toMatchObject({ minItems: 1, maxItems: 10 })
    expect(guests.items.properties.count).toMatchObject({ minimum: 1, maximum: 50, format: "int32" })
    const terminal = doc.paths["/api/quickbook/v1/tours"].get.parameters.find((p: any) =>
      p.name === "Quickbook-Terminal"
    )
    expect(terminal.schema).toMatchObject({ format: "uuid", maxLength: 36 })
  })
})
