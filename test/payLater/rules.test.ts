/** Pay-later charging's rules (src/payLater/rules.ts) and the adapter's reading of a decline. */
import { describe, expect, it } from "@effect/vitest"
import { declineOutcome } from "../../src/adapters/surfboard/merchantInitiated.js"
import { afterAttempt, attemptReference, beforeAttempt, RETRY_DELAYS_HOURS } from "../../src/payLater/rules.js"

const HOUR = 3_600_000
const now = new Date("2026-03-01T09:00:00Z")
const far = new Date(now.getTime() + 30 * 24 * HOUR)

describe("afterAttempt", () => {
  it("paid: collected", () => {
    expect(afterAttempt({ outcome: "paid", declineReason: null, attempt: 2, now, finalDeadlineAt: far })._tag).toBe(
      "Collected"
    )
  })

  it("soft declines retry at +6 h, +24 h, +48 h, then stop", () => {
    const at = [1, 2, 3].map((attempt) =>
      afterAttempt({ outcome: "soft_decline", declineReason: "INSUFFICIENT_FUNDS", attempt, now, finalDeadlineAt: far })
    )
    expect(at.map((a) => (a._tag === "Retry" ? (a.at.getTime() - now.getTime()) / HOUR : null))).toEqual([
      ...RETRY_DELAYS_HOURS
    ])
    const fourth = afterAttempt({ outcome: "soft_decline", declineReason: null, attempt: 4, now, finalDeadlineAt: far })
    expect(fourth).toMatchObject({ _tag: "Stop", reason: "retries_exhausted" })
  })

  it("a retry never passes the deadline: moved back to it; at the deadline, it stops", () => {
    const deadline = new Date(now.getTime() + 2 * HOUR)
    expect(afterAttempt({ outcome: "soft_decline", declineReason: null, attempt: 1, now, finalDeadlineAt: deadline }))
      .toMatchObject({ _tag: "Retry", at: deadline })
    expect(
      afterAttempt({
        outcome: "soft_decline",
        declineReason: null,
        attempt: 2,
        now: deadline,
        finalDeadlineAt: deadline
      })
    )
      .toMatchObject({ _tag: "Stop", reason: "deadline" })
  })

  it("hard declines and SCA stop at once, naming the provider's reason", () => {
    const hard = afterAttempt({
      outcome: "hard_decline",
      declineReason: "CARD_BLOCKED",
      attempt: 1,
      now,
      finalDeadlineAt: far
    })
    expect(hard).toMatchObject({ _tag: "Stop", reason: "hard_decline" })
    expect(hard._tag === "Stop" && hard.message).toContain("CARD_BLOCKED")
    expect(afterAttempt({ outcome: "sca_required", declineReason: null, attempt: 1, now, finalDeadlineAt: far }))
      .toMatchObject({ _tag: "Stop", reason: "sca_required" })
  })
})

describe("beforeAttempt", () => {
  it("no saved card, or past the deadline: not sent", () => {
    expect(beforeAttempt({ tokenId: null, now, finalDeadlineAt: far })?.reason).toBe("no_saved_card")
    expect(beforeAttempt({ tokenId: "t", now: far, finalDeadlineAt: now })?.reason).toBe("deadline")
    expect(beforeAttempt({ tokenId: "t", now, finalDeadlineAt: far })).toBeNull()
  })
})

describe("references and declines", () => {
  it("one reference per attempt", () => {
    expect(attemptReference("c1", 1)).not.toBe(attemptReference("c1", 2))
  })
  it("soft, SCA, and anything else hard", () => {
    expect(declineOutcome("INSUFFICIENT_FUNDS")).toBe("soft_decline")
    expect(declineOutcome("AUTHENTICATION_REQUIRED")).toBe("sca_required")
    expect(declineOutcome("CARD_BLOCKED")).toBe("hard_decline")
    expect(declineOutcome("SOMETHING_NEW")).toBe("hard_decline")
    expect(declineOutcome(null)).toBe("hard_decline")
  })
})
