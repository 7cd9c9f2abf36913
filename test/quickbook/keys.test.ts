import { describe, expect, it } from "@effect/vitest"
import { generateSecretKey, parseSecretKey } from "../../src/partner/auth/apiKey.js"
import { endpointBudgets } from "../../src/quickbook/auth.js"
import { clerkLanguage } from "../../src/quickbook/clerkMessages.js"
import { budgetOfOperation, QUICKBOOK_BUDGETS, quickbookBucket } from "../../src/quickbook/limits.js"
import { generateQuickbookKey, parseQuickbookKey, parseTerminalHeader } from "../../src/quickbook/terminals/key.js"
import { modeMayUse, sandboxMismatch } from "../../src/quickbook/terminals/testKeys.js"

describe("quickbook keys", () => {
  it("live and test keys round-trip; partner keys never parse here nor quickbook keys there", () => {
    for (const mode of ["live", "test"] as const) {
      const k = generateQuickbookKey(mode)
      expect(k.token.startsWith(`svcqb_${mode}_`)).toBe(true)
      expect(parseQuickbookKey(k.token)).toEqual({ mode, id: k.id, secret: k.secret })
      expect(parseSecretKey(k.token)).toBeUndefined()
    }
    expect(parseQuickbookKey(generateSecretKey().token)).toBeUndefined()
    expect(parseQuickbookKey("svcqb_prod_AAAAAAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB")).toBeUndefined()
  })

  it("terminal header is a UUID", () => {
    expect(parseTerminalHeader(undefined)).toBeUndefined()
    expect(parseTerminalHeader("desk-1")).toBeUndefined()
    expect(parseTerminalHeader(" 0F8FAD5B-D9CB-469F-A165-70867728950E ")).toBe("0f8fad5b-d9cb-469f-a165-70867728950e")
  })
})

describe("quickbook budgets", () => {
  it("spec §8 values, one bucket per budget and terminal", () => {
    expect(QUICKBOOK_BUDGETS).toEqual({
      writes: { perMinute: 60 },
      books: { perMinute: 60 },
      reads: { perMinute: 300 }
    })
    expect(["quote", "reserve", "release"].map(budgetOfOperation)).toEqual(["writes", "writes", "writes"])
    expect(budgetOfOperation("book")).toBe("books")
    expect(["tours", "slots", "sales", "ticket"].map(budgetOfOperation)).toEqual(["reads", "reads", "reads", "reads"])
    const buckets = new Set(
      (["writes", "books", "reads"] as const).flatMap((b) => ["t1", "t2"].map((t) => quickbookBucket(b, t)))
    )
    expect(buckets.size).toBe(6)
  })

  it("every endpoint declares its budget", () => {
    expect(endpointBudgets.get("GET /api/quickbook/v1/tours")).toBe("reads")
  })
})

describe("clerk language", () => {
  it("Norwegian when nb/no/nn ranks above English", () => {
    expect(clerkLanguage(undefined)).toBe("en")
    expect(clerkLanguage("nb")).toBe("nb")
    expect(clerkLanguage("nb-NO,nb;q=0.9,en;q=0.8")).toBe("nb")
    expect(clerkLanguage("no")).toBe("nb")
    expect(clerkLanguage("nn-NO")).toBe("nb")
    expect(clerkLanguage("en-GB,nb;q=0.5")).toBe("en")
    expect(clerkLanguage("de, nb;q=0.4")).toBe("nb")
    expect(clerkLanguage("en;q=0.3, nb;q=0.7")).toBe("nb")
    expect(clerkLanguage("fr")).toBe("en")
  })
})

describe("test keys and sandbox accounts", () => {
  it("a test key only through sandboxes, a live key only through live accounts; no merchant is no account touched", () => {
    for (const merchantSandbox of [true, null]) {
      expect(sandboxMismatch("test", { bookingSystemSandbox: true, merchantSandbox })).toBeNull()
      expect(sandboxMismatch("live", { bookingSystemSandbox: true, merchantSandbox })).toMatch(
        /^a live key never sells through sandbox accounts; the tour's booking-system account is a sandbox$|and the operator's merchant are sandboxes$/
      )
    }
    for (const merchantSandbox of [false, null]) {
      expect(sandboxMismatch("live", { bookingSystemSandbox: false, merchantSandbox })).toBeNull()
      expect(sandboxMismatch("test", { bookingSystemSandbox: false, merchantSandbox })).toMatch(
        /^a test key sells only through sandbox accounts; the tour's booking-system account/
      )
    }
    expect(sandboxMismatch("test", { bookingSystemSandbox: true, merchantSandbox: false }))
      .toBe("a test key sells only through sandbox accounts; the operator's merchant is live")
    expect(sandboxMismatch("live", { bookingSystemSandbox: false, merchantSandbox: true }))
      .toBe("a live key never sells through sandbox accounts; the operator's merchant is a sandbox")
    expect(sandboxMismatch("test", { bookingSystemSandbox: false, merchantSandbox: false }))
      .toBe(
        "a test key sells only through sandbox accounts; the tour's booking-system account and the operator's merchant are live"
      )
    expect(
      modeMayUse("test", true) && modeMayUse("live", false) && !modeMayUse("test", false) && !modeMayUse("live", true)
    ).toBe(true)
  })
})
