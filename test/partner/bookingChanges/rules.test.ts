/** Booking-change rules (src/partner/bookingChanges/rules.ts): when a claim (or a no-op answer) is refused, and the states by kind. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  ABANDONABLE_STATES,
  ANY_OPEN_STATE,
  type ChangesSeen,
  OPEN_STATES,
  unchangedFrom
} from "../../../src/partner/bookingChanges/rules.js"

const seen = (recorded: number, open?: ChangesSeen["open"]): ChangesSeen => ({ bookingId: "b1", recorded, open })

describe("unchangedFrom", () => {
  it("holds when nothing is open now and no change was recorded since", () => {
    expect(Either.isRight(unchangedFrom(seen(2), seen(2)))).toBe(true)
  })

  it("refuses while a change is open now (still being applied), whatever was seen", () => {
    const refused = unchangedFrom(seen(2), seen(3, { id: "c3", kind: "cancel", leaseExpired: false }))
    expect(Either.isLeft(refused) && refused.left.detail).toMatch(/still being applied/)
  })

  it("refuses when a change was recorded since it was seen (applied while the request was being checked)", () => {
    const refused = unchangedFrom(seen(2), seen(3))
    expect(Either.isLeft(refused) && refused.left.detail).toMatch(/was applied while this request was being checked/)
  })
})

describe("states", () => {
  it("every open state belongs to one kind; a cancel is abandoned only before its seats were released", () => {
    expect([...ANY_OPEN_STATE].sort()).toEqual([...OPEN_STATES.cancel, ...OPEN_STATES.reschedule].sort())
    expect(ABANDONABLE_STATES.cancel).toEqual(["releasing"])
    expect(ABANDONABLE_STATES.reschedule).toEqual(OPEN_STATES.reschedule)
  })
})
