import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { decodeCursor, encodeCursor, filterFingerprint } from "../../src/http/cursor.js"
import { microsToIso } from "../../src/http/cursor.js"

const secret = randomBytes(32)
const position = fc.record({
  createdMicros: fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }).map(String),
  id: fc.uuid()
})
const filters = fc.dictionary(
  fc.constantFrom("status", "date_from", "date_to", "partner_id"),
  fc.string({ maxLength: 40 })
)

describe("cursor", () => {
  it("round-trips any position under the same filters, within 200 characters", () => {
    fc.assert(fc.property(position, filters, (p, f) => {
      const cursor = encodeCursor(secret, p, filterFingerprint(f))
      expect(cursor.length).toBeLessThanOrEqual(200)
      expect(Either.getOrThrow(decodeCursor(secret, cursor, filterFingerprint(f)))).toEqual(p)
    }))
  })

  it("rejects any single-character change", () => {
    fc.assert(fc.property(position, fc.nat(), fc.integer({ min: 1, max: 60 }), (p, index, delta) => {
      const fp = filterFingerprint({})
      const cursor = encodeCursor(secret, p, fp)
      const i = index % cursor.length
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
      const replaced = alphabet[(alphabet.indexOf(cursor[i]!) + delta) % alphabet.length]!
      fc.pre(replaced !== cursor[i])
      const tampered = cursor.slice(0, i) + replaced + cursor.slice(i + 1)
      expect(Either.isLeft(decodeCursor(secret, tampered, fp))).toBe(true)
    }))
  })

  it("rejects a cursor signed with another secret or made under other filters", () => {
    const p = { createdMicros: "1795213647229984", id: "db806c10-3800-40a6-ad54-16f837f40a9b" }
    const cursor = encodeCursor(secret, p, filterFingerprint({ status: "CANCELLED" }))
    expect(Either.isLeft(decodeCursor(randomBytes(32), cursor, filterFingerprint({ status: "CANCELLED" })))).toBe(true)
    expect(decodeCursor(secret, cursor, filterFingerprint({ status: "REFUNDED" }))).toEqual(
      Either.left("was issued for other filters; start again without a cursor")
    )
    expect(Either.isLeft(decodeCursor(secret, "", filterFingerprint({})))).toBe(true)
    expect(Either.isLeft(decodeCursor(secret, "a.b.c", filterFingerprint({})))).toBe(true)
  })

  it("fingerprints ignore key order but not values", () => {
    expect(filterFingerprint({ a: 1, b: 2 })).toBe(filterFingerprint({ b: 2, a: 1 }))
    expect(filterFingerprint({ a: 1 })).not.toBe(filterFingerprint({ a: 2 }))
    expect(filterFingerprint({ a: undefined })).toBe(filterFingerprint({}))
  })

  it("renders microsecond positions exactly", () => {
    expect(microsToIso("1795213647229984")).toBe("2026-11-20T22:27:27.229984Z")
    expect(microsToIso("0")).toBe("1970-01-01T00:00:00.000000Z")
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 4_102_444_800_000_000n }), (micros) => {
      const iso = microsToIso(String(micros))
      const ms = BigInt(Date.parse(iso))
      expect(ms * 1000n + BigInt(iso.slice(23, 26))).toBe(micros)
    }))
  })
})
