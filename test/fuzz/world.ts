/**
 * The world the fuzzer asks about: the desk-sales world (Alpha with a Bókun sandbox vendor, a
 * Surfboard sandbox merchant, a site, a tour, a desk terminal and its test key) plus bookings of
 * Alpha and Beta, and keys of each kind for both APIs: a good one (first), none, a wrong one, an
 * expired one, another tenant's.
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { ALL_SCOPES, createKey, insertBooking } from "../support/fixtures.js"
import { deskWorld } from "../support/quickbook.js"
import type { Keys } from "./requests.js"
import type { Pool } from "./schemaValues.js"

const DESKS = 40

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
  // Quickbook budgets are per terminal (60 writes, 300 reads a minute): desks enough for a long campaign.
  const keys = yield* QuickbookKeys
  const desks = [s.terminal.id]
  for (let i = 0; i < DESKS; i++) desks.push((yield* keys.registerTerminal(w.alpha, `Desk ${i}`)).id)
  yield* keys.bindKey(s.key.id, desks.slice(1))
  const expiredDesk = yield* keys.issueKey({ mode: "test", name: "Expired", terminals: [s.terminal.id] })
  yield* keys.expireKey(expiredDesk.id, new Date(Date.now() - 60_000))
  const betaDesk = yield* keys.registerTerminal(w.beta, "Beta desk")
  const betaKey = yield* keys.issueKey({ mode: "test", name: "Beta desk app", terminals: [betaDesk.id] })
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
    wrong: `svcqb_test_${randomUUID().replaceAll("-", "")}`,
    expired: expiredDesk.token,
    "another tenant's": betaKey.token,
    "a partner key": good.token
  }
  const quickbookPool: Pool = {
    "Quickbook-Terminal": [...desks, betaDesk.id],
    activityId: [s.tour],
    date: [s.day],
    // A quote's departure and guest type as the desk's tour has them, so that some quotes succeed.
    time: ["10:00"],
    type: ["adult"],
    reference: [quote.reference],
    holdRef: [randomUUID()],
    idempotencyKey: [randomUUID()]
  }
  return { partnerKeys, partnerPool, quickbookKeys, quickbookPool, ownerEmail: `alice-${w.tag}@example.com` }
}).pipe(Effect.provide(QuickbookKeys.Default))
