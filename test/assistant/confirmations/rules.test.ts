import { describe, expect, it } from "@effect/vitest"
import {
  argumentsHash,
  departure,
  money,
  newConfirmToken,
  stateFingerprint,
  tokenHash
} from "../../../src/assistant/confirmations/rules.js"

describe("confirmation rules", () => {
  it("tokens are random, prefixed, 256 bits; only their hash is kept", () => {
    const tokens = new Set(Array.from({ length: 200 }, newConfirmToken))
    expect(tokens.size).toBe(200)
    for (const token of tokens) expect(token).toMatch(/^cfm_[A-Za-z0-9_-]{43}$/)
    const [a] = tokens
    expect(tokenHash(a!)).toMatch(/^[0-9a-f]{64}$/)
    expect(tokenHash(a!)).not.toContain(a!.slice(4))
    expect(tokenHash(a!)).toBe(tokenHash(a!))
  })

  it("the arguments hash is the same for the same arguments in any key order, and differs by tool and value", () => {
    const base = argumentsHash("cancel_booking", { id: "a", reason: "Weather" })
    expect(argumentsHash("cancel_booking", { reason: "Weather", id: "a" })).toBe(base)
    expect(argumentsHash("cancel_booking", { id: "a", reason: "Weather", extra: undefined })).toBe(base)
    expect(argumentsHash("cancel_booking", { id: "a", reason: "Weather!" })).not.toBe(base)
    expect(argumentsHash("reschedule_booking", { id: "a", reason: "Weather" })).not.toBe(base)
    expect(stateFingerprint({ status: "CONFIRMED", n: 1 })).toBe(stateFingerprint({ n: 1, status: "CONFIRMED" }))
    expect(stateFingerprint({ status: "CONFIRMED", n: 1 })).not.toBe(stateFingerprint({ status: "CONFIRMED", n: 2 }))
  })

  it("money in the currency's decimals; departures with and without a time", () => {
    expect(money(99800, "NOK")).toBe("NOK 998.00")
    expect(money(99800, "nok ")).toBe("NOK 998.00")
    expect(money(5000, "JPY")).toBe("JPY 5000")
    expect(money(1234, "KWD")).toBe("KWD 1.234")
    expect(departure("2026-12-01", "10:00", "Europe/Oslo")).toBe("2026-12-01 at 10:00 (Europe/Oslo)")
    expect(departure("2026-12-01", null, "Europe/Oslo")).toBe("2026-12-01")
    expect(departure(null, null, "Europe/Oslo")).toBe("no date")
  })
})
