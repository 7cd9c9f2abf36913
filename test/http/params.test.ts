import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { IsoDate, IsoDateTimeWithOffset } from "../../src/domain/dates.js"
import { intParam } from "../../src/http/params.js"
import {
  generateSecretKey,
  hashSecret,
  looksLikeSecretKey,
  parseSecretKey,
  secretMatches
} from "../../src/partner/auth/apiKey.js"
import { operatorIdsFor } from "../../src/partner/auth/visibility.js"

const ok = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

describe("date parameters", () => {
  it("accepts real calendar days only", () => {
    for (
      const d of ["2026-11-21", "2024-02-29", "2026-03-29", "2026-10-25", "2026-12-31", "2027-01-01", "9998-12-31"]
    ) expect(ok(IsoDate, d), d).toBe(true)
    for (
      const d of [
        "2026-02-29",
        "2026-13-01",
        "2026-00-10",
        "2026-11-31",
        "26-11-21",
        "2026-11-21T00:00:00Z",
        "2026-1-1",
        "",
        "9999-01-01",
        "9999-12-31"
      ]
    ) {
      expect(ok(IsoDate, d), d).toBe(false)
    }
  })

  it("accepts date-times only with Z or an offset", () => {
    for (
      const d of [
        "2026-11-21T10:00:00Z",
        "2026-11-21T10:00:00.123456Z",
        "2026-03-29T02:30:00+02:00",
        "2026-11-21T23:59:59-05:00",
        "2026-11-21t10:00:00z"
      ]
    ) {
      expect(ok(IsoDateTimeWithOffset, d), d).toBe(true)
    }
    for (
      const d of [
        "2026-11-21",
        "2026-11-21T10:00:00",
        "2026-11-21 10:00:00Z",
        "2026-11-21T24:00:00Z",
        "2026-02-30T10:00:00Z",
        "now"
      ]
    ) {
      expect(ok(IsoDateTimeWithOffset, d), d).toBe(false)
    }
  })

  it("limit accepts whole decimal numbers in range only", () => {
    const limit = intParam(1, 100)
    fc.assert(fc.property(fc.integer({ min: 1, max: 100 }), (n) => {
      expect(Schema.decodeUnknownSync(limit)(String(n))).toBe(n)
    }))
    fc.assert(fc.property(fc.string(), (s) => {
      fc.pre(!/^\d{1,9}$/.test(s) || Number(s) < 1 || Number(s) > 100)
      expect(ok(limit, s)).toBe(false)
    }))
  })
})

describe("secret keys", () => {
  it("parse only in the exact format and match only their own secret", () => {
    const k = generateSecretKey()
    expect(k.token).toMatch(/^svc_live_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}$/)
    expect(parseSecretKey(k.token)).toEqual({ id: k.id, secret: k.secret })
    expect(secretMatches(k.secret, hashSecret(k.secret))).toBe(true)
    expect(secretMatches(k.secret.slice(1) + "x", hashSecret(k.secret))).toBe(false)
    for (
      const bad of [
        "",
        k.token + "x",
        k.token.replace("svc_live_", "svc_test_"),
        ` ${k.token}`,
        k.token.replace("_", "-")
      ]
    ) {
      expect(parseSecretKey(bad), bad).toBeUndefined()
    }
    expect(looksLikeSecretKey(`xx${k.token}`)).toBe(true)
    expect(generateSecretKey().id).not.toBe(k.id)
  })
})

describe("operators in scope", () => {
  const key = { partners: [{ id: "a", name: "A" }, { id: "b", name: "B" }] }
  it("is every operator of the key, or the one partner_id names", () => {
    expect(Effect.runSync(operatorIdsFor(key, undefined))).toEqual(["a", "b"])
    expect(Effect.runSync(operatorIdsFor(key, "b"))).toEqual(["b"])
    const outside = Effect.runSyncExit(operatorIdsFor(key, "c"))
    expect(Exit.isFailure(outside)).toBe(true)
  })
})
