/**
 * The sandbox's admin endpoints under /sandbox: not Surfboard's, no credentials, never subject to
 * switches. They mirror the in-process `Sandbox` methods, for the demo and for tests that drive the
 * sandbox from outside the process.
 *
 *   GET    /sandbox/faults                     current switches ({all, merchants})
 *   PUT    /sandbox/faults                     {latencyMs?, errorRate?, errorStatus?, hang?, down?, loseAnswer?,
 *                                               partialRefundRatio?, settlement?, settlementDelayMs?, mitOutcome?,
 *                                               merchantId?}
 *   POST   /sandbox/reset                      every switch off, request log emptied, clock back to real time
 *   GET    /sandbox/requests?method=&path=&merchantId=   {count, requests}
 *   GET    /sandbox/clock                      {now}
 *   PUT    /sandbox/clock                      {now?: ISO date-time, advanceMs?: number}
 *   DELETE /sandbox/clock                      back to real time
 *   POST   /sandbox/partners                   {name} → partner with its API key and secret
 *   POST   /sandbox/merchants                  MerchantSpec → merchant with credentials and terminals
 *   POST   /sandbox/sales                      SaleSpec → {orderId, paymentId} (a desk sale, paid unless pay: false)
 *   POST   /sandbox/orders/:orderId/pay        {declined?} → the card presented at the terminal
 *   POST   /sandbox/links/pay                  {url, declined?} → the guest pays a payment link
 *   POST   /sandbox/settle                     {orderId?, paymentId?} → {settled}
 *   GET    /sandbox/orders/:orderId/refunds    the refunds of a purchase
 *   POST   /sandbox/settlement-charges         ChargeSpec → a charge in a settlement report (reports.ts)
 *   GET    /sandbox/merchants/:merchantId/reports   the merchant's settlement reports with their charges
 */
import { HttpRouter, HttpServerRequest } from "@effect/platform"
import { Effect, Schema } from "effect"
import { faultSwitchFields } from "../faults.js"
import { answer, decodeBody, param, rawBody } from "./api.js"
import type { Sandbox } from "./sandbox.js"

const SwitchesBody = Schema.Struct({
  ...faultSwitchFields(500, 502, 503, 504),
  loseAnswer: Schema.optional(Schema.Literal("no", "hang", "drop")),
  partialRefundRatio: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThan(1)))),
  settlement: Schema.optional(Schema.Literal("instant", "delayed", "manual")),
  settlementDelayMs: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  mitOutcome: Schema.optional(Schema.Literal("paid", "soft_decline", "hard_decline", "sca_required")),
  reportReads: Schema.optional(Schema.Literal("ok", "error", "hang", "drop")),
  merchantId: Schema.optional(Schema.String)
})

const ClockBody = Schema.Struct({
  now: Schema.optional(Schema.DateFromString),
  advanceMs: Schema.optional(Schema.Number)
})

/** Admin bodies are the in-process methods' arguments as JSON; the methods check what matters. */
const json = Effect.flatMap(
  rawBody,
  (raw) => decodeBody(Schema.Record({ key: Schema.String, value: Schema.Unknown }), raw ?? {})
)

/**
 * The posted JSON as the argument of the sandbox call it is for: the sandbox's admin API trusts its
 * callers (the tests and the demo), as a provider's own test-data tools do; its public API checks.
 */
const given = <A>(spec: unknown): A => spec as A

/** Admin answers are plain JSON (no Surfboard envelope). */
const plain = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
  answer(Effect.map(handler, (body) => ({ status: 200, body: body ?? {} })))

const stateOf = (sandbox: Sandbox) =>
  Effect.map(sandbox.faults.get, (s) => ({ all: s.all, merchants: Object.fromEntries(s.scoped) }))

const text = (name: string) =>
  Effect.map(HttpServerRequest.ParsedSearchParams, (params) => {
    const value = params[name]
    return typeof value === "string" && value !== "" ? value : undefined
  })

export const adminApi = (sandbox: Sandbox) =>
  HttpRouter.empty.pipe(
    HttpRouter.get("/sandbox/faults", plain(stateOf(sandbox))),
    HttpRouter.put(
      "/sandbox/faults",
      plain(Effect.gen(function*() {
        const { merchantId, ...settings } = yield* Effect.flatMap(rawBody, (raw) => decodeBody(SwitchesBody, raw ?? {}))
        yield* sandbox.faults.set(settings, merchantId === undefined ? undefined : { merchantId })
        return yield* stateOf(sandbox)
      }))
    ),
    HttpRouter.post("/sandbox/reset", plain(Effect.as(sandbox.faults.reset, { reset: true }))),
    HttpRouter.get(
      "/sandbox/requests",
      plain(Effect.gen(function*() {
        const filter = {
          method: yield* text("method"),
          path: yield* text("path"),
          merchantId: yield* text("merchantId")
        }
        const defined = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined))
        return { count: yield* sandbox.requests.count(defined), requests: yield* sandbox.requests.list }
      }))
    ),
    HttpRouter.get("/sandbox/clock", plain(Effect.map(sandbox.clock.now, (now) => ({ now: now.toISOString() })))),
    HttpRouter.put(
      "/sandbox/clock",
      plain(Effect.gen(function*() {
        const body = yield* Effect.flatMap(rawBody, (raw) => decodeBody(ClockBody, raw ?? {}))
        if (body.now !== undefined) yield* sandbox.clock.set(body.now)
        if (body.advanceMs !== undefined) yield* sandbox.clock.advance(body.advanceMs)
        return { now: (yield* sandbox.clock.now).toISOString() }
      }))
    ),
    HttpRouter.del(
      "/sandbox/clock",
      plain(Effect.zipRight(sandbox.clock.reset, Effect.map(sandbox.clock.now, (now) => ({ now: now.toISOString() }))))
    ),
    HttpRouter.post(
      "/sandbox/partners",
      plain(Effect.flatMap(json, (body) => sandbox.createPartner(String(body.name ?? "Partner"))))
    ),
    HttpRouter.post("/sandbox/merchants", plain(Effect.flatMap(json, (spec) => sandbox.createMerchant(given(spec))))),
    HttpRouter.post("/sandbox/sales", plain(Effect.flatMap(json, (spec) => sandbox.createPaidOrder(given(spec))))),
    HttpRouter.post(
      "/sandbox/orders/:orderId/pay",
      plain(Effect.gen(function*() {
        const body = yield* json
        return yield* sandbox.payOrder(yield* param("orderId"), { declined: body.declined === true })
      }))
    ),
    HttpRouter.post(
      "/sandbox/links/pay",
      plain(Effect.gen(function*() {
        const body = yield* json
        return yield* sandbox.payLink(String(body.url ?? ""), { declined: body.declined === true })
      }))
    ),
    HttpRouter.post(
      "/sandbox/settle",
      plain(Effect.gen(function*() {
        const body = yield* json
        const filter = {
          ...(typeof body.orderId === "string" ? { orderId: body.orderId } : {}),
          ...(typeof body.paymentId === "string" ? { paymentId: body.paymentId } : {})
        }
        return { settled: yield* sandbox.settle(filter) }
      }))
    ),
    HttpRouter.get("/sandbox/orders/:orderId/refunds", plain(Effect.flatMap(param("orderId"), sandbox.refundsOf))),
    HttpRouter.post(
      "/sandbox/settlement-charges",
      plain(Effect.flatMap(json, (spec) => sandbox.reports.seedCharge(given(spec))))
    ),
    HttpRouter.get(
      "/sandbox/merchants/:merchantId/reports",
      plain(Effect.flatMap(param("merchantId"), sandbox.reports.reportsOf))
    )
  )
