/**
 * The world the fuzzer asks about: the desk-sales world (Alpha with a Bókun sandbox vendor, a
 * Surfboard sandbox merchant, a site, a tour, a desk terminal and its test key) plus, so that valid
 * requests of every operation can succeed, what each operation needs: manifest rows of a linked
 * departure, bookings at the Bókun sandbox to reschedule, pay-later bookings with a balance, bookings
 * to cancel, a publishable key and its Origin, an issued invoice, quotes paid at the Surfboard sandbox
 * to book and a booked sale; and keys of each kind for both APIs: a good one (first), none, a wrong
 * one, an expired one, another tenant's. Signed links (invoice files, tickets) are taken from real
 * answers (`seed`), and answers during the campaign add what they return (`learn`).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { PublishableKeys } from "../../src/partner/auth/PublishableKeys.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { addDays } from "../../src/sandbox/bokun/index.js"
import { ALL_SCOPES, createKey, insertBooking } from "../support/fixtures.js"
import { call } from "../support/http.js"
import { close, sale, setLegal } from "../support/invoices.js"
import { insertRow } from "../support/mirror.js"
import { linkedBooking } from "../support/payments.js"
import { BASE, customer, deskWorld } from "../support/quickbook.js"
import type { OperationWorld } from "./campaign.js"
import type { FuzzRequest, Keys } from "./requests.js"
import type { Pool } from "./schemaValues.js"

const DESKS = 40
const P = "/api/v1"
const ORIGIN = "https://www.alpha-tours.example"

/** A pool whose arrays the campaign may add to. */
type Growing = Record<string, Array<unknown>>

/** Adds `value` to the pool's `name` (the newest 50 kept). */
const add = (pool: Growing, name: string, value: unknown) => {
  const held = pool[name] ??= []
  if (!held.includes(value)) held.push(value)
  if (held.length > 50) held.shift()
}

/**
 * A signed link (`…/<file>?exp=…&sig=…`) into the pool of the operation that opens it: its file and
 * query as one parameter set ("" of a pool), since they only work together.
 */
const addLink = (pool: Growing, url: string) => {
  const u = new URL(url)
  const params = { file: decodeURIComponent(u.pathname.split("/").pop()!), ...Object.fromEntries(u.searchParams) }
  if (!(pool[""] ?? []).some((p) => JSON.stringify(p) === JSON.stringify(params))) add(pool, "", params)
}

/** Every string in a JSON value, with the name of the field holding it. */
const strings = (value: unknown, name = ""): Array<[string, string]> =>
  typeof value === "string"
    ? [[name, value]]
    : Array.isArray(value)
    ? value.flatMap((v) => strings(v, name))
    : value && typeof value === "object"
    ? Object.entries(value).flatMap(([k, v]) => strings(v, k))
    : []

const PAY_LATER = { status: "upcoming", amountMinor: 30000, currency: "NOK", paidAt: null } as const

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

  // What the partner writes need to succeed, each operation its own (a cancelled booking cannot be rescheduled).
  const rows = yield* Effect.forEach(
    [1, 2, 3],
    () => insertRow({ accountId: s.a.accountId, operatorId: w.alpha, date: s.day, productId: String(s.pa.id) })
  )
  const toReschedule = yield* Effect.forEach([1, 2, 3], () => linkedBooking(w.alpha, s.a.vendor))
  const owing = yield* Effect.forEach([1, 2], () =>
    insertBooking({
      operatorId: w.alpha,
      tourId: s.tour,
      experienceDate: addDays(s.day, 9),
      payLater: { ...PAY_LATER, chargeAt: new Date(Date.now() + 10 * 86_400_000) }
    }))
  // Wholly pay-later and not yet charged: nothing to refund (a paid booking the service has no payment of is refused).
  const toCancel = yield* Effect.forEach([1, 2, 3, 4, 5], () =>
    insertBooking({
      operatorId: w.alpha,
      tourId: s.tour,
      experienceDate: addDays(s.day, 3),
      amountMinor: PAY_LATER.amountMinor,
      payLater: { ...PAY_LATER, chargeAt: new Date(Date.now() + 2 * 86_400_000) }
    }))
  const publishable = yield* (yield* PublishableKeys).create({
    siteId: s.site,
    createdBy: w.alice,
    name: "Fuzzed site",
    origins: ["*.alpha-tours.example"]
  }).pipe(Effect.orDie)
  yield* setLegal(w.alpha, `Alpha Tours AS ${w.tag}`, "912345678")
  yield* sale(w.alpha, "2025-01-10T10:00:00Z", 10000)
  yield* close("2025-01", [s.merchant.id])

  // What the desk's writes need: quotes paid at the Surfboard sandbox (one booked now, for its ticket).
  const paid = yield* Effect.forEach(
    [1, 2, 3, 4],
    () => Effect.flatMap(s.quote(1), (q) => Effect.map(s.pay(q), (payment) => ({ q, payment })))
  )
  const bookBodies = paid.map(({ payment, q }) => ({
    reference: q.reference,
    payment: { provider: "payprovider", ...payment },
    customer
  }))
  const booked = yield* s.book(bookBodies[0]!.reference, paid[0]!.payment)
  if (booked.status !== 200) return yield* Effect.dieMessage(`book: ${booked.status} ${booked.text}`)
  const held = yield* s.reserve((yield* s.quote(1)).reference)

  // Quickbook budgets are per terminal (60 writes, 300 reads a minute): desks enough for a long campaign.
  const keys = yield* QuickbookKeys
  const desks = [s.terminal.id]
  // Sharing the harbour desk's card terminal, so that each can charge (quote, reserve, book).
  for (let i = 0; i < DESKS; i++) desks.push((yield* keys.registerTerminal(w.alpha, `Desk ${i}`, s.deskCard)).id)
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
  const invoiceFiles: Growing = {}
  const rescheduleTo = { date: [1, 2, 3].map((d) => addDays(s.day, d)) }
  const partnerOperations: Record<string, OperationWorld> = {
    [`POST ${P}/manifest/{id}/checkin`]: { pool: { id: [...rows, randomUUID()] } },
    [`POST ${P}/bookings/{id}/reschedule`]: {
      pool: {
        id: toReschedule.map((b) => b.bookingId),
        ...rescheduleTo,
        start_time_id: [String(s.pa.startTimes[0]!.id)],
        rate_id: [String(s.pa.rates[0]!.id)]
      }
    },
    [`GET ${P}/bookings/{id}/reschedule-options`]: { pool: { id: toReschedule.map((b) => b.bookingId) } },
    [`POST ${P}/bookings/{id}/payment-link`]: { pool: { id: [...owing, betaBooking] } },
    [`POST ${P}/bookings/{id}/cancel`]: { pool: { id: [...toCancel, betaBooking] } },
    [`GET ${P}/tours/{id}`]: { pool: { id: [s.tour, randomUUID()] } },
    [`GET ${P}/tours/{id}/availability`]: { pool: { id: [s.tour] } },
    [`POST ${P}/collect`]: {
      pool: {
        "": [
          { key: publishable.key, kind: "pageview", url: `${ORIGIN}/tours/fjord?utm_source=fuzz`, new_visitor: true },
          { key: publishable.key, kind: "tour_view", url: `${ORIGIN}/tours/fjord`, new_visitor: false, tour_id: s.tour }
        ]
      },
      headers: { origin: ORIGIN }
    },
    [`GET ${P}/finance/invoice-files/{file}`]: { pool: invoiceFiles }
  }
  /** The signed invoice links of a finance answer into the invoice-file operation's pool. */
  const learnPartner = (_operation: string, body: unknown) => {
    for (const [, v] of strings(body)) if (v.includes("/invoice-files/")) addLink(invoiceFiles, v)
  }
  const invoices = yield* call(`${P}/finance/invoices`, { key: good.token })
  learnPartner("seed", invoices.body)
  if (!invoiceFiles[""]) return yield* Effect.dieMessage(`no invoice link: ${invoices.status} ${invoices.text}`)

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
    time: ["10:00"],
    type: ["adult"],
    reference: [quote.reference, bookBodies[0]!.reference],
    holdRef: [randomUUID()],
    idempotencyKey: [randomUUID()]
  }
  // Reserve has quotes of its own: a hold (or its release) on a sale to be booked would be another test.
  // A sale is the desk's that quoted it: every desk quotes, but the chain (reserve → release, book,
  // ticket) runs on the harbour desk, the one the references are learnt from, within its 60 writes a minute.
  const desk = [s.terminal.id]
  const quoted: Growing = { reference: [(yield* s.quote(1)).reference, (yield* s.quote(2)).reference] }
  const holds: Growing = { holdRef: [held.holdRef] }
  const tickets: Growing = {}
  const quoteBody = (count: number) => ({
    activityId: s.tour,
    start: { date: s.day, time: "10:00" },
    guests: [{ type: "adult", count }]
  })
  const quickbookOperations: Record<string, OperationWorld> = {
    // At most 50 guests and the departure's 20 seats: a few valid quotes as the desk makes them.
    [`POST ${BASE}/quote`]: { pool: { "": [quoteBody(1), quoteBody(2)] } },
    [`POST ${BASE}/reserve`]: { pool: { ...quoted, "Quickbook-Terminal": desk } },
    [`DELETE ${BASE}/reserve/{holdRef}`]: { pool: { ...holds, "Quickbook-Terminal": desk } },
    [`POST ${BASE}/book`]: { pool: { "": bookBodies, "Quickbook-Terminal": desk } },
    [`GET ${BASE}/sales/{reference}`]: { pool: { reference: [bookBodies[0]!.reference], "Quickbook-Terminal": desk } },
    [`GET ${BASE}/sales/{reference}/ticket`]: {
      pool: { reference: [bookBodies[0]!.reference], "Quickbook-Terminal": desk }
    },
    [`GET ${BASE}/tickets/{file}`]: { pool: tickets }
  }
  /** From the desk's answers: a quote's reference for reserve, a hold's for its release; any ticket link. */
  const learnQuickbook = (operation: string, body: unknown, request?: FuzzRequest) => {
    const ours = request === undefined || request.headers["quickbook-terminal"] === s.terminal.id
    for (const [name, v] of strings(body)) {
      if (ours && operation === `POST ${BASE}/quote` && name === "reference") add(quoted, "reference", v)
      if (ours && name === "holdRef") add(holds, "holdRef", v)
      if (v.includes("/tickets/")) addLink(tickets, v)
    }
  }
  const ticket = yield* call(`${BASE}/sales/${bookBodies[0]!.reference}/ticket`, {
    key: s.key.token,
    headers: s.headers
  })
  learnQuickbook("seed", ticket.body)
  if (!tickets[""]) return yield* Effect.dieMessage(`no ticket link: ${ticket.status} ${ticket.text}`)

  // The assistant's tools ask for the same things by the same ids.
  // Whole arguments ("") without confirm_token: the first call of a write tool, its preview, is the result.
  const toolPools: Record<string, Pool> = {
    check_in_guests: { "": rows.map((id) => ({ id, status: "checked_in" })) },
    send_balance_payment_link: { "": owing.map((id) => ({ id })) },
    cancel_booking: { "": toCancel.map((id) => ({ id, reason: "The guest asked to cancel." })) },
    reschedule_booking: { "": toReschedule.map((b) => ({ id: b.bookingId, date: rescheduleTo.date[0] })) },
    get_reschedule_options: { id: toReschedule.map((b) => b.bookingId) },
    get_booking: { id: bookings },
    get_site_analytics: { "": [{ from: s.day, to: s.day }] }
  }
  return {
    partnerKeys,
    partnerPool,
    partnerOperations,
    learnPartner,
    quickbookKeys,
    quickbookPool,
    quickbookOperations,
    learnQuickbook,
    toolPools,
    ownerEmail: `alice-${w.tag}@example.com`
  }
}).pipe(Effect.provide(QuickbookKeys.Default), Effect.provide(PublishableKeys.Default))
