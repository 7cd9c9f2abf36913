import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { decideCheckin } from "../../../src/partner/checkins/rules.js"
import { partnerOpenApi } from "../../../src/partner/openapi.js"
import { canonicalJson, parseIdempotencyKey, requestFingerprint } from "../../../src/partner/writes/rules.js"

const KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~:+/=-".split("")
const validKey = fc.array(fc.constantFrom(...KEY_CHARS), { minLength: 8, maxLength: 255 }).map((c) => c.join(""))

describe("Idempotency-Key syntax", () => {
  it("a valid key is accepted bare and quoted, as the same key", () => {
    fc.assert(fc.property(validKey, (key) => {
      expect(parseIdempotencyKey(key)).toEqual(Either.right(key))
      expect(parseIdempotencyKey(`"${key}"`)).toEqual(Either.right(key))
      expect(parseIdempotencyKey(` "${key}" `)).toEqual(Either.right(key))
    }))
  })

  it("refuses missing, short, long and keys with other characters", () => {
    for (
      const bad of [
        undefined,
        "",
        "  ",
        "1234567",
        "x".repeat(256),
        "\"1234567\"",
        "\"abc12345",
        "abc12345\"",
        "abc 12345",
        "abc,12345",
        "æøå12345"
      ]
    ) {
      expect(Either.isLeft(parseIdempotencyKey(bad)), String(bad)).toBe(true)
    }
    fc.assert(
      fc.property(validKey, fc.constantFrom(" ", ",", ";", "\"", "\\", "é", "\t", "*"), fc.nat(), (key, char, at) => {
        // Inside the key: white space around the value is optional white space of the header.
        const i = 1 + (at % (key.length - 2))
        expect(Either.isLeft(parseIdempotencyKey(key.slice(0, i) + char + key.slice(i + 1)))).toBe(true)
      })
    )
  })
})

describe("Idempotency-Key as documented", () => {
  // The fuzzer generated half-quoted keys from the documented pattern, which the service refuses.
  const documented = (partnerOpenApi() as any).paths["/api/v1/bookings/{id}/cancel"].post.parameters
    .find((p: { name: string }) => p.name === "Idempotency-Key").schema
  const pattern = new RegExp(documented.pattern)

  it("the document's pattern takes exactly the keys the service takes (the header's outer spaces aside)", () => {
    for (
      const key of ["1234567", "\"1234567\"", "\"abc12345", "abc12345\"", "abc 12345", "æøå12345", "x".repeat(256)]
    ) {
      expect(pattern.test(key), key).toBe(false)
    }
    fc.assert(fc.property(validKey, fc.constantFrom("", "\"", "\"\""), (key, quotes) => {
      const value = quotes === "\"" ? `"${key}` : quotes === "\"\"" ? `"${key}"` : key
      expect(pattern.test(value), value).toBe(Either.isRight(parseIdempotencyKey(value)))
    }))
  })
})

describe("the same request", () => {
  it("canonical JSON ignores member order and undefined members, and keeps the value", () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const reordered = JSON.parse(
        JSON.stringify(value),
        (_k, v) =>
          v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v
      )
      expect(canonicalJson(reordered)).toBe(canonicalJson(value))
      expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)))
    }))
    expect(canonicalJson({ b: 1, a: undefined, c: [1, { y: 2, x: null }] })).toBe(`{"b":1,"c":[1,{"x":null,"y":2}]}`)
  })

  it("canonical JSON of any nesting depth: no stack overflow (it is not recursive)", () => {
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep, a: undefined }
    const text = canonicalJson(deep)
    expect(text.length).toBe(1 + 50_000 * 2 + 50_000 * 6)
    expect(text.startsWith(`{"k":[{"k":[`)).toBe(true)
    expect(() => requestFingerprint("POST", "/x", deep)).not.toThrow()
  })

  it("canonical JSON is the same text as the plain recursive definition", () => {
    const reference = (value: unknown): string => {
      if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : reference(v))).join(",")}]`
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(",")}}`
    }
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withBoxedValues: false, withMap: false, withSet: false }),
        (value) => {
          expect(canonicalJson(value)).toBe(reference(value))
        }
      )
    )
    expect(canonicalJson(undefined)).toBe("null")
    expect(canonicalJson([undefined, () => 1, { f: () => 1, u: undefined }])).toBe(`[null,null,{"f":null}]`)
  })

  it("the fingerprint changes with method, path and body, not with the path's case", () => {
    const base = requestFingerprint("POST", "/api/v1/manifest/ABC/checkin", { status: "checked_in" })
    expect(requestFingerprint("post", "/api/v1/manifest/abc/checkin", { status: "checked_in" })).toBe(base)
    expect(requestFingerprint("PUT", "/api/v1/manifest/abc/checkin", { status: "checked_in" })).not.toBe(base)
    expect(requestFingerprint("POST", "/api/v1/manifest/abd/checkin", { status: "checked_in" })).not.toBe(base)
    expect(requestFingerprint("POST", "/api/v1/manifest/abc/checkin", { status: "no_show" })).not.toBe(base)
    expect(requestFingerprint("POST", "/api/v1/manifest/abc/checkin", { status: "checked_in", present: 1 })).not.toBe(
      base
    )
  })
})

describe("check-in rule", () => {
  const live = { rowStatus: "CONFIRMED", participants: 3, current: null }

  it("sets, clears and detects no-ops", () => {
    expect(decideCheckin(live, { status: "checked_in" })).toEqual(
      Either.right({ next: { status: "checked_in", present: null }, noop: false })
    )
    expect(decideCheckin(live, { status: "checked_in", present: 3 })).toEqual(
      Either.right({ next: { status: "checked_in", present: 3 }, noop: false })
    )
    expect(decideCheckin(live, { status: "no_show" })).toEqual(
      Either.right({ next: { status: "no_show", present: null }, noop: false })
    )
    expect(decideCheckin(live, { status: "clear" })).toEqual(Either.right({ next: null, noop: true }))
    const checked = { ...live, current: { status: "checked_in" as const, present: 2 } }
    expect(decideCheckin(checked, { status: "checked_in", present: 2 })).toEqual(
      Either.right({ next: { status: "checked_in", present: 2 }, noop: true })
    )
    expect(decideCheckin(checked, { status: "checked_in" })).toEqual(
      Either.right({ next: { status: "checked_in", present: null }, noop: false })
    )
    expect(decideCheckin(checked, { status: "clear" })).toEqual(Either.right({ next: null, noop: false }))
  })

  it("refuses present above the party and a cancelled row except clear", () => {
    const tooMany = decideCheckin(live, { status: "checked_in", present: 4 })
    expect(Either.isLeft(tooMany) && tooMany.left._tag).toBe("InvalidRequest")
    const cancelled = { ...live, rowStatus: "CANCELLED", current: { status: "checked_in" as const, present: null } }
    for (const status of ["checked_in", "no_show"] as const) {
      const res = decideCheckin(cancelled, { status })
      expect(Either.isLeft(res) && res.left._tag).toBe("NotPossible")
    }
    expect(decideCheckin(cancelled, { status: "clear" })).toEqual(Either.right({ next: null, noop: false }))
  })
})
