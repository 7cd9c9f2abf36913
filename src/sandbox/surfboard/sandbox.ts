/**
 * The Surfboard sandbox: a real HTTP server speaking Surfboard Payments' dialect (API-KEY,
 * API-SECRET and MERCHANT-ID checked), backed by its own tables in PostgreSQL (schema
 * surfboard_sandbox, created at start), with hosted payment pages, switches for failures, lost
 * answers, partial refunds and slow settlement, its own movable clock, and helpers that play the
 * card holder — all usable in-process (this object) and over HTTP (/sandbox/*, admin.ts).
 *
 *   const sandbox = yield* startSandbox({ port: 0 })              // needs SqlClient and Scope
 *   const merchant = yield* sandbox.createMerchant({ name: "Fjord Tours AS" })
 *   const account = sandbox.account(merchant)                    // a PaymentAccount pointing here
 *   const sale = yield* sandbox.createPaidOrder({ merchantId: merchant.id, amountMinor: 49900, currency: "NOK", referenceId: "SVC-…" })
 *   yield* sandbox.faults.set({ loseAnswer: "drop" }, { merchantId: merchant.id })
 */
import { HttpMiddleware, HttpRouter, HttpServerRequest } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Context, type Duration, Effect, Layer, Redacted, type Scope } from "effect"
import { numericCurrency } from "../../adapters/surfboard/currency.js"
import { purchaseBody } from "../../adapters/surfboard/mapping.js"
import type { PaymentAccount, ServiceProviderShare, TaxLine } from "../../ports/PaymentProvider.js"
import {
  answeredToTheEnd,
  dropConnection,
  type FaultState,
  isAdminPath,
  type LoggedRequest,
  makeFaults,
  pathOf
} from "../faults.js"
import { listen, type SandboxOptions } from "../server.js"
import { adminApi } from "./admin.js"
import { surfboardApi } from "./api.js"
import { merchantIdOf } from "./auth.js"
import { makeSandboxClock } from "./clock.js"
import { badRequest, notFound } from "./failure.js"
import type { ChargeRecord } from "./merchantInitiated.js"
import { payPage } from "./payPage.js"
import { type ChargeSpec, makeReports, type ReportLine, reportsApi } from "./reports.js"
import type { MerchantRow, TerminalRow } from "./rows.js"
import { createSandboxSchema } from "./schema.js"
import { makeStore, type Store } from "./store.js"
import { NO_SWITCHES, type SurfboardSwitches } from "./switches.js"

export type { SandboxOptions }

export interface MerchantSpec {
  readonly name: string
  /** The partner whose credentials act for the merchant; default: a new partner of its own. */
  readonly partnerId?: string
  readonly country?: string
  /** Default: one card terminal ("Desk 1") and one payment page terminal. */
  readonly terminals?: ReadonlyArray<{ readonly name?: string; readonly kind?: "card" | "PaymentPage" }>
}

export interface SandboxPartner {
  readonly id: string
  readonly name: string
  readonly apiKey: string
  readonly apiSecret: string
}

export interface SandboxMerchant {
  readonly id: string
  readonly name: string
  readonly partnerId: string
  readonly apiKey: string
  readonly apiSecret: string
  /** The first card terminal, or null. */
  readonly terminalId: string | null
  /** The first payment page terminal, or null. */
  readonly paymentPageTerminalId: string | null
  readonly terminals: ReadonlyArray<
    { readonly id: string; readonly name: string; readonly kind: "card" | "PaymentPage" }
  >
}

export interface SaleSpec {
  readonly merchantId: string
  /** Default: the merchant's first card terminal. */
  readonly terminalId?: string
  readonly amountMinor: number
  /** ISO 4217 alpha. */
  readonly currency: string
  /** The sale's reference; absent: an order made at the terminal without one (its line then has no name either). */
  readonly referenceId?: string
  readonly description?: string
  readonly taxLines?: ReadonlyArray<TaxLine>
  readonly serviceProviders?: ReadonlyArray<ServiceProviderShare>
  /** Default true: the card is presented at once. */
  readonly pay?: boolean
}

export interface Paid {
  readonly orderId: string
  readonly paymentId: string
  readonly transactionId: string | null
  /** PAYMENT_COMPLETED, or PAYMENT_FAILED when declined. */
  readonly status: string
}

export interface RefundRecord {
  readonly orderId: string
  readonly referenceId: string | null
  readonly status: string
  readonly requestedMinor: number
  readonly refundedMinor: number
}

export interface Sandbox {
  /** Where the sandbox listens, e.g. http://127.0.0.1:41234: an account's base URL. */
  readonly baseUrl: string
  readonly port: number
  readonly faults: {
    /** Merges switches for every merchant, or for one merchant (its own settings win over the global ones). */
    readonly set: (settings: Partial<SurfboardSwitches>, scope?: { readonly merchantId: string }) => Effect.Effect<void>
    readonly get: Effect.Effect<FaultState<SurfboardSwitches>>
    /** Every switch off, the request log emptied, the clock back to real time. */
    readonly reset: Effect.Effect<void>
  }
  /** Calls received on the Surfboard API (admin calls and pay pages excluded), faulted ones included. */
  readonly requests: {
    readonly count: (
      filter?: { readonly method?: string; readonly path?: string | RegExp; readonly merchantId?: string }
    ) => Effect.Effect<number>
    readonly list: Effect.Effect<ReadonlyArray<LoggedRequest>>
    readonly clear: Effect.Effect<void>
  }
  /** The sandbox's time (orders, payments, the void cut-off, settlement and page expiry read it). */
  readonly clock: {
    readonly now: Effect.Effect<Date>
    readonly set: (at: Date) => Effect.Effect<void>
    readonly advance: (by: Duration.DurationInput) => Effect.Effect<void>
    readonly reset: Effect.Effect<void>
  }
  readonly createPartner: (name: string) => Effect.Effect<SandboxPartner>
  readonly createMerchant: (spec: MerchantSpec) => Effect.Effect<SandboxMerchant>
  /** A merchant seeded before (the sandbox's tables outlive restarts). */
  readonly findMerchant: (merchantId: string) => Effect.Effect<SandboxMerchant | undefined>
  /** A PaymentAccount for the merchant, pointing at this sandbox. */
  readonly account: (merchant: SandboxMerchant, overrides?: Partial<PaymentAccount>) => PaymentAccount
  /** A desk sale: an order on a card terminal, paid by card at once unless `pay: false`. */
  readonly createPaidOrder: (
    spec: SaleSpec
  ) => Effect.Effect<{ readonly orderId: string; readonly paymentId: string | null }>
  /** A card presented for the order at its terminal (`declined`: the card is refused). */
  readonly payOrder: (orderId: string, options?: { readonly declined?: boolean }) => Effect.Effect<Paid>
  /** The guest opens a payment link and pays it. */
  readonly payLink: (url: string, options?: { readonly declined?: boolean }) => Effect.Effect<Paid>
  /** Completes refunds and voids waiting under `settlement: "manual"` (all, or one order's or payment's); answers how many. */
  readonly settle: (filter?: { readonly orderId?: string; readonly paymentId?: string }) => Effect.Effect<number>
  /** The refunds (return orders) of a purchase, settled up to now. */
  readonly refundsOf: (purchaseOrderId: string) => Effect.Effect<ReadonlyArray<RefundRecord>>
  /**
   * The guest's first payment, tokenised (pay-later bookings): a payment page order with
   * `enforceTokenization`, paid at once; answers its order and the saved card's token id.
   */
  readonly saveCard: (spec: {
    readonly merchantId: string
    readonly amountMinor: number
    readonly currency: string
    readonly referenceId: string
  }) => Effect.Effect<{ readonly orderId: string; readonly tokenId: string }>
  /** Every order charged to a saved card (merchant-initiated), oldest first: tests count charges with it. */
  readonly chargesOf: (tokenId: string) => Effect.Effect<ReadonlyArray<ChargeRecord>>
  /** Settlement reports made from the merchant's transactions, and charges seeded into them (reports.ts). */
  readonly reports: {
    readonly reportsOf: (merchantId: string) => Effect.Effect<ReadonlyArray<ReportLine>>
    readonly seedCharge: (spec: ChargeSpec) => Effect.Effect<{
      readonly chargeId: string
      readonly settlementDate: string
      readonly orderId: string | null
      readonly paymentId: string | null
    }>
  }
}

const die = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)

const merchantOf = (store: Store, merchant: MerchantRow, terminals: ReadonlyArray<TerminalRow>) =>
  Effect.map(store.partnerById(merchant.partner_id), (partner): SandboxMerchant => ({
    id: merchant.id,
    name: merchant.name,
    partnerId: partner.id,
    apiKey: partner.api_key,
    apiSecret: partner.api_secret,
    terminalId: terminals.find((t) => t.kind === "card")?.id ?? null,
    paymentPageTerminalId: terminals.find((t) => t.kind === "PaymentPage")?.id ?? null,
    terminals: terminals.map((t) => ({ id: t.id, name: t.name, kind: t.kind }))
  }))

export const startSandbox = (
  options: SandboxOptions = {}
): Effect.Effect<Sandbox, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    yield* createSandboxSchema
    const clock = yield* makeSandboxClock
    const faults = yield* makeFaults<SurfboardSwitches>({
      defaults: NO_SWITCHES,
      scopeOf: merchantIdOf,
      errorBody: (status) => ({
        status: "ERROR",
        message: status === 503 ? "Service Unavailable" : "An unexpected error occurred."
      }),
      exempt: (path) => isAdminPath(path) || path.startsWith("/pay/")
    })
    const store = yield* makeStore(clock, (merchantId) => faults.effective(merchantId))
    const reports = yield* makeReports(clock)
    const { server, port, baseUrl } = yield* listen(options)

    const findMerchant = (merchantId: string) =>
      Effect.gen(function*() {
        const merchant = yield* store.merchantById(merchantId)
        return merchant ? yield* merchantOf(store, merchant, yield* store.terminalsOf(merchant.id)) : undefined
      })

    const pay = (orderId: string, token: string | undefined, declined: boolean | undefined): Effect.Effect<Paid> =>
      die(store.pay(orderId, { token, declined }))

    const sandbox: Sandbox = {
      baseUrl,
      port,
      faults: {
        set: (settings, scope) => faults.set(settings, scope?.merchantId),
        get: faults.get,
        reset: Effect.zipRight(faults.reset, clock.reset)
      },
      requests: {
        count: (filter = {}) => {
          const { merchantId, ...rest } = filter
          return faults.requests.count(merchantId === undefined ? rest : { ...rest, scope: merchantId })
        },
        list: faults.requests.list,
        clear: faults.requests.clear
      },
      clock: { now: clock.now, set: clock.set, advance: clock.advance, reset: clock.reset },
      createPartner: (name) =>
        die(
          Effect.map(
            store.createPartner(name),
            (p) => ({ id: p.id, name: p.name, apiKey: p.api_key, apiSecret: p.api_secret })
          )
        ),
      createMerchant: (spec) =>
        die(Effect.gen(function*() {
          const partnerId = spec.partnerId ?? (yield* store.createPartner(`${spec.name} (partner)`)).id
          yield* store.partnerById(partnerId)
          const terminals = (spec.terminals ??
            [{ name: "Desk 1", kind: "card" as const }, { name: "Payment page", kind: "PaymentPage" as const }])
            .map((t, i) => ({ name: t.name ?? `Terminal ${i + 1}`, kind: t.kind ?? "card" as const }))
          const made = yield* store.createMerchant({
            partnerId,
            name: spec.name,
            country: spec.country ?? "NO",
            terminals
          })
          return yield* merchantOf(store, made.merchant, made.terminals)
        })),
      findMerchant: (merchantId) => die(findMerchant(merchantId)),
      account: (merchant, overrides) => ({
        id: `surfboard-sandbox-${merchant.id}`,
        baseUrl,
        apiKey: Redacted.make(merchant.apiKey),
        apiSecret: Redacted.make(merchant.apiSecret),
        merchantId: merchant.id,
        paymentPageTerminalId: merchant.paymentPageTerminalId,
        ...overrides
      }),
      createPaidOrder: (spec) =>
        die(Effect.gen(function*() {
          const merchant = yield* store.merchantById(spec.merchantId)
          if (!merchant) return yield* notFound(`Merchant ${spec.merchantId}`)
          const terminalId = spec.terminalId ??
            (yield* store.terminalsOf(merchant.id)).find((t) => t.kind === "card")?.id
          if (terminalId === undefined) {
            return yield* badRequest("The merchant has no card terminal.", "TERMINAL_NOT_FOUND")
          }
          const currency = numericCurrency(spec.currency)
          if (currency === undefined) {
            return yield* badRequest(`Unknown currency ${spec.currency}.`)
          }
          const made = purchaseBody(
            {
              terminalId,
              referenceId: spec.referenceId ?? "",
              amountMinor: spec.amountMinor,
              currency: spec.currency,
              description: spec.description ?? spec.referenceId ?? "",
              taxLines: spec.taxLines,
              serviceProviders: spec.serviceProviders
            },
            currency,
            { initiatePaymentsOptions: { paymentMethod: "CARD" } }
          )
          // Made at the terminal without a reference: none on the order, and the line's name reads null (as Surfboard answers it).
          const body = spec.referenceId !== undefined ? made : {
            ...made,
            referenceId: undefined,
            orderLines: made.orderLines?.map((l) => ({ ...l, name: spec.description ?? null }))
          }
          const created = yield* store.keyed(
            merchant.id,
            null,
            "",
            Effect.map(store.createOrder(merchant, body, baseUrl), (data) => ({ status: 200, body: data }))
          )
          const { orderId, paymentId } = created.body as { orderId: string; paymentId?: string }
          if (spec.pay === false) return { orderId, paymentId: paymentId ?? null }
          const paid = yield* store.pay(orderId)
          return { orderId, paymentId: paid.paymentId }
        })),
      payOrder: (orderId, options) => pay(orderId, undefined, options?.declined),
      payLink: (url, options) =>
        Effect.suspend(() => {
          const parsed = new URL(url)
          const match = /^\/pay\/([^/]+)$/.exec(parsed.pathname)
          return pay(match?.[1] ?? "", parsed.searchParams.get("pi") ?? "", options?.declined)
        }),
      settle: (filter) => die(store.settleNow(filter)),
      refundsOf: (purchaseOrderId) =>
        die(Effect.map(store.refundsOf(purchaseOrderId), (rows) =>
          rows.map((r) => ({
            orderId: r.order_id,
            referenceId: r.reference_id,
            status: r.status,
            requestedMinor: r.requested_minor,
            refundedMinor: r.refunded_minor
          })))),
      saveCard: (spec) =>
        die(Effect.gen(function*() {
          const merchant = yield* store.merchantById(spec.merchantId)
          if (!merchant) return yield* notFound(`Merchant ${spec.merchantId}`)
          const terminalId = (yield* store.terminalsOf(merchant.id)).find((t) => t.kind === "PaymentPage")?.id
          if (terminalId === undefined) {
            return yield* badRequest("The merchant has no payment page terminal.", "TERMINAL_NOT_FOUND")
          }
          const currency = numericCurrency(spec.currency)
          if (currency === undefined) return yield* badRequest(`Unknown currency ${spec.currency}.`)
          const body = purchaseBody(
            {
              terminalId,
              referenceId: spec.referenceId,
              amountMinor: spec.amountMinor,
              currency: spec.currency,
              description: spec.referenceId
            },
            currency,
            { online: { enforceTokenization: true } }
          )
          const created = yield* store.createOrder(merchant, body, baseUrl)
          yield* store.pay(created.orderId)
          const [token] = yield* store.merchantInitiated.tokensOf(merchant.id, created.orderId)
          return { orderId: created.orderId, tokenId: token!.tokenId }
        })),
      chargesOf: (tokenId) => die(store.merchantInitiated.chargesOf(tokenId)),
      reports: {
        reportsOf: (merchantId) => die(reports.reportsOf(merchantId)),
        seedCharge: (spec) => die(reports.seedCharge(spec))
      }
    }

    /**
     * The `loseAnswer` switch: a call that changes something runs to the end (its transaction is
     * committed), then its answer never arrives (`hang`) or the connection is closed (`drop`).
     */
    const loseAnswer = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = pathOf(request)
        if (request.method === "GET" || isAdminPath(path) || path.startsWith("/pay/")) return yield* app
        const switches = yield* faults.effective(merchantIdOf(request))
        if (switches.loseAnswer === "no") return yield* app
        const response = yield* app
        if (switches.loseAnswer === "drop") {
          yield* dropConnection(request)
          return response
        }
        return yield* Effect.never
      })

    const app = HttpRouter.concatAll(
      surfboardApi(store, baseUrl),
      reportsApi(store, reports, (merchantId) => faults.effective(merchantId)),
      payPage(store),
      adminApi(sandbox)
    )
    // The sandbox stands in for a system we do not own: its requests are not the service's spans.
    yield* server.serve(faults.middleware(loseAnswer(answeredToTheEnd(app)))).pipe(
      Effect.locally(HttpMiddleware.currentTracerDisabledWhen, () => true)
    )
    yield* Effect.logDebug(`Surfboard sandbox listening on ${baseUrl}`)
    return sandbox
  }).pipe(Effect.orDie, Effect.withSpan("SurfboardSandbox.start"))

/** The running sandbox, for layers and tests. */
export class SurfboardSandbox extends Context.Tag("Sandbox/SurfboardSandbox")<SurfboardSandbox, Sandbox>() {}

/** A sandbox for the layer's lifetime. */
export const SurfboardSandboxLive = (options: SandboxOptions = {}) =>
  Layer.scoped(SurfboardSandbox, startSandbox(options))
