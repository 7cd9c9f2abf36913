/**
 * The world the fuzzer asks about: the desk-sales world (Alpha with a Bókun sandbox vendor, a
 * Surfboard sandbox merchant, a site, a tour, a desk terminal and its test key) plus bookings of
 * Alpha and Beta, and keys of each kind for both APIs: a good one (first), none, a wrong one, an
 * expired one, another tenant's.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ALL_SCOPES, createKey, insertBooking } from "../support/fixtures.js"
import { deskWorld } from "../support/quickbook.js"
import type { Keys } from "./requests.js"
import type { Pool } from "./schemaValues.js"

export const fuzzWorld = Effect.gen(function*() {
  const s = yield* deskWorld
  const { w } = s
  const scopes = [...ALL_SCOPES]
  const good = yield* createKey({ by: w.alice, operators: [w.alpha], scopes })
  const expired = yield* createKey({
    by: w.alice,
    operators: [w.alpha],
    scopes,
    expiresAt: new Date(Date.now() - 60_000)
  })
  const otherTenant = yield* createKey({ by: w.bob, operators: [w.beta], scopes })
  const bookings = [
    yield* insertBooking({ operatorId: w.alpha, tourId: s.tour, experienceDate: s.day }),
    yield* insertBooking({ operatorId: w.alpha, tourId: s.tour, experienceDate: s.day, status: "CANCELLED" }),
    yield* insertBooking({ operatorId: w.alpha, experienceDate: "2026-03-29", payLater: undefined })
  ]
  const betaBooking = yield* insertBooking({ operatorId: w.beta })
  const quote = yield* s.quote(1)
  const wrong = `sk_test_${randomUUID().replaceAll("-", "")}_${randomUUID().replaceAll("-", "")}`

  const partnerKeys: Keys = {
    good: good.token,
    none: undefined,
    wrong,
    expired: expired.token,
    "another tenant's": otherTenant.token,
    "the desk's quickbook key": s.key.token
  }
  const partnerPool: Pool = {
    id: [...bookings, betaBooking, s.tour, randomUUID()],
    tour_id: [s.tour],
    partner_id: [w.alpha, w.beta],
    date: [s.day],
    from: [s.day],
    to: [s.day],
    currency: ["NOK", "EUR"]
  }
  const quickbookKeys: Keys = {
    good: s.key.token,
    none: undefined,
    wrong: `qb_test_${randomUUID().replaceAll("-", "")}`,
    "a partner key": good.token
  }
  const quickbookPool: Pool = {
    "Quickbook-Terminal": [s.terminal.id],
    activityId: [s.tour],
    date: [s.day],
    reference: [quote.reference],
    holdRef: [randomUUID()],
    idempotencyKey: [randomUUID()]
  }
  return { partnerKeys, partnerPool, quickbookKeys, quickbookPool }
})
