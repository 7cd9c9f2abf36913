/**
 * A desk-sales world for POST /book tests: Alpha with a Bókun sandbox vendor, a Surfboard sandbox
 * merchant with two card terminals ("Desk 1" is the desk's, "Desk 2" another) and a payment page, a
 * site selling Alpha's Fjord Cruise (the vendor's first product), a desk terminal bound to a test
 * key; helpers that quote, hold, pay at the Surfboard sandbox and book over real HTTP, and read
 * what the sandboxes and the database hold.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Option } from "effect"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { addDays, BokunSandbox, localDay, type ProductSpec } from "../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { makeWorld } from "./fixtures.js"
import { call } from "./http.js"
import { merchantFor, PartnerId, returnedBySandbox, vendorFor } from "./payments.js"
import { createSite, insertLinkedTour } from "./tours.js"

export const BASE = "/api/quickbook/v1"

export const customer = { firstName: "Kari", lastName: "Nordmann", email: "kari@example.com" }

/**
 * The smallest selling desk: Alpha with a Bókun sandbox vendor and a Surfboard sandbox merchant (both
 * sandboxes), its Fjord Cruise (the vendor's first product) on its site, a desk with the merchant's
 * card terminal and a test key bound to it; `day` is tomorrow in Oslo. Needs QuickbookKeys.
 */
export const sellingDesk = Effect.gen(function*() {
  const w = yield* makeWorld
  const a = yield* vendorFor(w.alpha)
  const merchant = yield* merchantFor(w.alpha)
  const site = yield* createSite(w.alpha, "Alpha")
  const own = yield* insertLinkedTour({
    operatorId: w.alpha,
    title: "Fjord Cruise",
    sites: [site],
    product: a.vendor.products[0]!
  })
  const keys = yield* QuickbookKeys
  const terminal = yield* keys.registerTerminal(w.alpha, "Harbour desk", merchant.terminalId)
  const key = yield* keys.issueKey({ mode: "test", name: "Desk app", terminals: [terminal.id] })
  const headers = { "quickbook-terminal": terminal.id }
  const day = addDays(localDay(Date.now(), "Europe/Oslo"), 1)
  /** A quote of `count` adults at 10:00 on `day`; anything but 200 fails the test with the answer. */
  const quote = (count = 2) =>
    Effect.flatMap(
      call(`${BASE}/quote`, {
        method: "POST",
        key: key.token,
        headers,
        body: { activityId: own, start: { date: day, time: "10:00" }, guests: [{ type: "adult", count }] }
      }),
      (r) =>
        r.status === 200
          ? Effect.succeed(
            r.body as { reference: string; validUntil: string; cartLine: { totalMinor: number; currency: string } }
          )
          : Effect.dieMessage(`quote: ${r.status} ${r.text}`)
    )
  /** Seats left at 10:00 on `day` (null: no limit), as the desk reads them. */
  const seatsLeft = Effect.map(
    call(`${BASE}/tours/${own}/slots?date=${day}`, { key: key.token, headers }),
    (r) => r.body.slots[0].seatsLeft as number | null
  )
  return { w, a, merchant, site, own, keys, terminal, key, headers, day, quote, seatsLeft }
})

/** The Bókun vendor's products of a desk world, when not the small vendor's one (`deskWorldWith`). */
class DeskProducts extends Context.Tag("test/DeskProducts")<DeskProducts, ReadonlyArray<ProductSpec>>() {}

export const deskWorld = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const surfboard = yield* SurfboardSandbox
  const bokun = yield* BokunSandbox
  const w = yield* makeWorld
  const products = yield* Effect.serviceOption(DeskProducts)
  const a = yield* vendorFor(w.alpha, Option.match(products, { onNone: () => ({}), onSome: (p) => ({ products: p }) }))
  const merchant = yield* surfboard.createMerchant({
    name: `Merchant ${w.tag}`,
    partnerId: yield* PartnerId,
    terminals: [{ name: "Desk 1" }, { name: "Desk 2" }, { name: "Payment page", kind: "PaymentPage" }]
  })
  yield* sql`
    INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, sandbox)
    VALUES (${w.alpha}, ${merchant.id}, ${merchant.paymentPageTerminalId}, true)`.pipe(Effect.orDie)
  const deskCard = merchant.terminals.find((t) => t.name === "Desk 1")!.id
  const otherCard = merchant.terminals.find((t) => t.name === "Desk 2")!.id
  const site = yield* createSite(w.alpha, "Alpha")
  const pa = a.vendor.products[0]!
  const tour = yield* insertLinkedTour({ operatorId: w.alpha, title: "Fjord Cruise", sites: [site], product: pa })
  const keys = yield* QuickbookKeys
  const terminal = yield* keys.registerTerminal(w.alpha, "Harbour desk", deskCard)
  const key = yield* keys.issueKey({ mode: "test", name: "Desk app", terminals: [terminal.id] })
  const headers = { "quickbook-terminal": terminal.id }
  const day = addDays(localDay(Date.now(), "Europe/Oslo"), 1)
  const startTimeId = pa.startTimes[0]!.id

  const quote = (count = 2) =>
    Effect.flatMap(
      call(`${BASE}/quote`, {
        method: "POST",
        key: key.token,
        headers,
        body: { activityId: tour, start: { date: day, time: "10:00" }, guests: [{ type: "adult", count }] }
      }),
      (r) =>
        r.status === 200
          ? Effect.succeed(
            r.body as { reference: string; validUntil: string; cartLine: { totalMinor: number; currency: string } }
          )
          : Effect.dieMessage(`quote: ${r.status} ${r.text}`)
    )

  const reserve = (reference: string) =>
    Effect.flatMap(
      call(`${BASE}/reserve`, {
        method: "POST",
        key: key.token,
        headers,
        body: { reference, idempotencyKey: crypto.randomUUID() }
      }),
      (r) => (r.status === 200 ? Effect.succeed(r.body) : Effect.dieMessage(`reserve: ${r.status} ${r.text}`))
    )

  /** A card payment at the Surfboard sandbox, by default exactly what the sale asks, on the desk's card terminal. */
  const pay = (
    sale: { reference: string; cartLine: { totalMinor: number; currency: string } },
    o: {
      amountMinor?: number
      currency?: string
      referenceId?: string
      terminalId?: string
      merchantId?: string
      at?: Date
      paid?: boolean
    } = {}
  ) =>
    Effect.gen(function*() {
      if (o.at) yield* surfboard.clock.set(o.at)
      const made = yield* surfboard.createPaidOrder(
        {
          merchantId: o.merchantId ?? merchant.id,
          terminalId: o.terminalId ?? (o.merchantId ? undefined : deskCard),
          amountMinor: o.amountMinor ?? sale.cartLine.totalMinor,
          currency: o.currency ?? sale.cartLine.currency,
          referenceId: o.referenceId ?? sale.reference,
          ...(o.paid === false ? { pay: false } : {})
        } as Parameters<typeof surfboard.createPaidOrder>[0]
      ).pipe(Effect.ensuring(surfboard.clock.reset))
      return { orderId: made.orderId, paymentId: made.paymentId! }
    })

  const book = (
    reference: string,
    payment: { orderId: string; paymentId: string },
    o: {
      holdRef?: string
      phone?: string
      language?: "en" | "nb"
      baseUrl?: string
      headers?: Record<string, string>
      customer?: unknown
    } = {}
  ) =>
    call(`${BASE}/book`, {
      method: "POST",
      key: key.token,
      headers: { ...headers, ...o.headers },
      ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}),
      body: {
        reference,
        ...(o.holdRef ? { holdRef: o.holdRef } : {}),
        payment: { provider: "payprovider", ...payment },
        customer: o.customer ?? { ...customer, ...(o.phone ? { phone: o.phone } : {}) },
        ...(o.language ? { language: o.language } : {})
      }
    })

  /** Bookings the Bókun sandbox holds for the sale (external reference = the sale reference). */
  const bokunBookings = (reference: string) =>
    sql<{ confirmation_code: string; status: string; phone: string | null }>`
      SELECT confirmation_code, status, phone FROM bokun_sandbox.bookings WHERE external_reference = ${reference} ORDER BY id`
      .pipe(
        Effect.orDie
      )

  const seatsLeft = Effect.flatMap(
    call(`${BASE}/tours/${tour}/slots?date=${day}`, { key: key.token, headers }),
    (r) => Effect.succeed(r.body.slots[0].seatsLeft as number | null)
  )

  const sale = (reference: string) =>
    sql<
      {
        status: string
        paid_by_payment_id: string | null
        booking_code: string | null
        failure_reason: string | null
        customer: any
        language: string | null
      }
    >`
      SELECT status, paid_by_payment_id, booking_code, failure_reason, customer, language FROM quickbook_sales WHERE reference = ${reference}`
      .pipe(
        Effect.orDie,
        Effect.map((rows) => rows[0]!)
      )

  const paymentRow = (paymentId: string) =>
    sql<
      {
        state: string
        role: string | null
        failure_reason: string | null
        refund_method: string | null
        refund_state: string | null
        detail: string | null
        alerted_at: Date | null
        refund_attempts: number
      }
    >`
      SELECT state, role, failure_reason, refund_method, refund_state, detail, alerted_at, refund_attempts
      FROM quickbook_payments WHERE provider = 'payprovider' AND payment_id = ${paymentId}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0])
    )

  return {
    w,
    a,
    pa,
    bokun,
    surfboard,
    merchant,
    deskCard,
    otherCard,
    site,
    tour,
    terminal,
    key,
    headers,
    day,
    startTimeId,
    quote,
    reserve,
    pay,
    book,
    bokunBookings,
    seatsLeft,
    sale,
    paymentRow,
    returned: (orderId: string) => returnedBySandbox(orderId)
  }
}).pipe(Effect.provide(QuickbookKeys.Default))

/** The desk world with these Bókun products (the first is the desk's Fjord Cruise), e.g. one priced per booking. */
export const deskWorldWith = (products: ReadonlyArray<ProductSpec>) =>
  Effect.provideService(deskWorld, DeskProducts, products)

export type DeskWorld = Effect.Effect.Success<typeof deskWorld>

/** Every open payment's lease run out and every refund's backoff over: as if the request had crashed long ago. */
export const expireLeases = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`UPDATE quickbook_payments SET lease_until = now() - interval '1 second' WHERE lease_until IS NOT NULL`.pipe(
      Effect.orDie
    )
)

/** The payment went back exactly once, in full: one void of the whole payment or one completed refund order. */
export const expectReturnedOnce = (s: DeskWorld, orderId: string, amountMinor: number) =>
  Effect.map(s.returned(orderId), (r) => {
    const ok = (r.voided === amountMinor && r.refundOrders === 0 && r.refunded === 0) ||
      (r.voided === 0 && r.refundOrders === 1 && r.refunded === amountMinor)
    if (!ok) {
      throw new Error(`order ${orderId}: expected ${amountMinor} returned once, the sandbox shows ${JSON.stringify(r)}`)
    }
  })

/**
 * Every payment past verification ended confirmed or refunded, and the sandbox agrees: a confirmed
 * one was never returned, a refunded one was returned exactly once in full; and no sale was booked
 * twice at Bókun.
 */
export const everyVerifiedPaymentSettled = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ payment_id: string; order_id: string; state: string; amount_minor: number | null }>`
    SELECT payment_id, order_id, state, amount_minor::int AS amount_minor FROM quickbook_payments ORDER BY created_at`
    .pipe(Effect.orDie)
  const unsettled = rows.filter((r) => r.state !== "confirmed" && r.state !== "refunded" && r.state !== "mismatch")
  if (unsettled.length > 0) throw new Error(`payments not settled: ${JSON.stringify(unsettled)}`)
  if (rows.filter((r) => r.state !== "mismatch").length === 0) throw new Error("no verified payment in this file")
  for (const r of rows) {
    const back = yield* returnedBySandbox(r.order_id)
    if (r.state === "refunded") {
      const once = (back.voided === r.amount_minor && back.refundOrders === 0) ||
        (back.voided === 0 && back.refundOrders === 1 && back.refunded === r.amount_minor)
      if (!once) throw new Error(`payment ${r.payment_id} refunded but the sandbox shows ${JSON.stringify(back)}`)
    } else if (back.voided + back.refunded !== 0) {
      throw new Error(`payment ${r.payment_id} is ${r.state} but the sandbox returned money: ${JSON.stringify(back)}`)
    }
  }
  const twice = yield* sql<{ external_reference: string; n: number }>`
    SELECT external_reference, count(*)::int AS n FROM bokun_sandbox.bookings
    WHERE external_reference LIKE 'SVC-%' AND status = 'CONFIRMED' GROUP BY external_reference HAVING count(*) > 1`
    .pipe(Effect.orDie)
  if (twice.length > 0) throw new Error(`sales booked twice at Bókun: ${JSON.stringify(twice)}`)
})
