import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { currencyExponent, fromMinor, toMinor } from "../../src/adapters/bokun/money.js"
import { bokunDate, parseBokunDate, signature, signatureMatches } from "../../src/adapters/bokun/signing.js"

describe("Bókun signing", () => {
  it("matches the example in Bókun's API documentation", () => {
    // Date, keys, method and path from Bókun's "API keys and Authentication" example.
    expect(signature({
      date: "2013-11-09 14:33:46",
      accessKey: "de235a6a15c340b6b1e1cb5f3687d04a",
      secretKey: "23e2c7da7f7048e5b46f96bc91324800",
      method: "POST",
      pathAndQuery: "/activity.json/search?lang=EN&currency=ISK"
    })).toBe("XrOiTYa9Y34zscnLCsAEh8ieoyo=")
  })

  it("depends on every part: date, key, method, path and query", () => {
    const base = {
      date: "2026-03-01 10:00:00",
      accessKey: "ak",
      secretKey: "sk",
      method: "GET",
      pathAndQuery: "/booking.json/booking/A-1"
    }
    const sig = signature(base)
    expect(signature({ ...base, method: "get" })).toBe(sig) // the method is upper-cased
    for (
      const change of [
        { date: "2026-03-01 10:00:01" },
        { accessKey: "ak2" },
        { secretKey: "sk2" },
        { method: "POST" },
        { pathAndQuery: "/booking.json/booking/A-2" },
        { pathAndQuery: "/booking.json/booking/A-1?lang=EN" }
      ]
    ) expect(signature({ ...base, ...change })).not.toBe(sig)
  })

  it("writes the date as yyyy-MM-dd HH:mm:ss in UTC and reads it back", () => {
    expect(bokunDate(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02 03:04:05")
    expect(parseBokunDate("2026-01-02 03:04:05")).toBe(Date.UTC(2026, 0, 2, 3, 4, 5))
    expect(parseBokunDate("2026-02-30 03:04:05")).toBeNull()
    expect(parseBokunDate("2026-01-02T03:04:05Z")).toBeNull()
    fc.assert(fc.property(fc.integer({ min: 0, max: 4102444800 }), (seconds) => {
      expect(parseBokunDate(bokunDate(seconds * 1000))).toBe(seconds * 1000)
    }))
  })

  it("compares signatures exactly", () => {
    expect(signatureMatches("abc=", "abc=")).toBe(true)
    expect(signatureMatches("abd=", "abc=")).toBe(false)
    expect(signatureMatches("abc", "abc=")).toBe(false)
  })
})

describe("money", () => {
  it("uses the currency's ISO 4217 exponent", () => {
    expect(toMinor(149.5, "EUR")).toBe(14950)
    expect(toMinor(19.99, "NOK")).toBe(1999)
    expect(toMinor(12900, "ISK")).toBe(12900)
    expect(toMinor(3500, "JPY")).toBe(3500)
    expect(toMinor(1.234, "KWD")).toBe(1234)
    expect(currencyExponent("isk")).toBe(0)
    expect(toMinor(-10.05, "USD")).toBe(-1005)
  })

  it("round-trips minor units", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_000 }),
        fc.constantFrom("EUR", "ISK", "JPY", "KWD", "NOK"),
        (minor, currency) => {
          expect(toMinor(fromMinor(minor, currency), currency)).toBe(minor)
        }
      )
    )
  })
})
