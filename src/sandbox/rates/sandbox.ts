/**
 * The rates sandbox: a real HTTP server speaking both exchange-rate dialects the adapter reads,
 * Norges Bank's SDMX-JSON (`GET /api/data/EXR/B.EUR+USD.NOK.SP?format=sdmx-json&startPeriod=…&endPeriod=…`)
 * and the ECB data API's csvdata (`GET /service/data/EXR/D.NOK+USD.EUR.SP00.A?format=csvdata&…`),
 * from deterministic fixtures (series.ts). No database: nothing it serves changes but its switches.
 *
 *   const sandbox = yield* startRatesSandbox({ port: 0 })     // needs a Scope
 *   adapter options: { norgesBankUrl: sandbox.baseUrl, ecbUrl: sandbox.baseUrl }
 *
 * Switches (the shared ones, ../faults.ts, for both sources or one: scope `norges_bank` or `ecb`):
 * latencyMs, errorRate + errorStatus, hang, down; and `hold(day, currency?)`, a rate not published
 * yet (a late rate) until `release`. A range without a single observation answers 404 `NoResultsFound`
 * (as both sources do). Admin endpoints under /sandbox (never faulted):
 *
 *   GET    /sandbox/faults                  current switches ({all, sources})
 *   PUT    /sandbox/faults                  {latencyMs?, errorRate?, errorStatus?, hang?, down?, source?}
 *   POST   /sandbox/reset                   every switch off, nothing held, request log emptied
 *   GET    /sandbox/requests?source=&path=  {count, requests}
 *   GET    /sandbox/held                    {held: [{day, currency}]} (currency null: every currency)
 *   PUT    /sandbox/held                    {day, currency?} → holds that day's rate back
 *   DELETE /sandbox/held?day=               releases one day (no day: every held rate)
 *   GET    /sandbox/rates?currency=&day=    {nokPerUnit, norgesBank: {value, unitMult}, ecb} of the fixtures
 */
import { HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Context, Effect, Layer, Ref, Schema } from "effect"
import { answeredToTheEnd, type Faults, faultSwitchFields, makeFaults, NO_FAULTS, pathOf } from "../faults.js"
import { listen, type SandboxOptions } from "../server.js"
import { renderEcbCsv, renderSdmxJson } from "./render.js"
import { ecbValue, nokPerUnit, norgesBankValue, SERIES } from "./series.js"

export type { SandboxOptions }

export type RateSourceScope = "norges_bank" | "ecb"

export interface HeldRate {
  readonly day: string
  /** null: every currency of that day. */
  readonly currency: string | null
}

export interface RatesSandbox {
  /** Where the sandbox listens, e.g. http://127.0.0.1:41234: the base URL of both sources. */
  readonly baseUrl: string
  readonly port: number
  /** The transport switches; scope `norges_bank` or `ecb` for one source. */
  readonly faults: Faults
  readonly requests: Faults["requests"]
  /** Holds a day's rate back (one currency, or all): not published until released. */
  readonly hold: (day: string, currency?: string) => Effect.Effect<void>
  /** Publishes a held day (no day: every held rate). */
  readonly release: (day?: string) => Effect.Effect<void>
  readonly held: Effect.Effect<ReadonlyArray<HeldRate>>
}

const scopeOf = (request: HttpServerRequest.HttpServerRequest): RateSourceScope | null => {
  const path = pathOf(request)
  return path.startsWith("/api/") ? "norges_bank" : path.startsWith("/service/") ? "ecb" : null
}

const DAY = /^\d{4}-\d{2}-\d{2}$/

/** startPeriod/endPeriod as days: a year or a month stands for its first (start) or last (end) day. */
const periodDay = (value: string | undefined, end: boolean): string | undefined => {
  if (value === undefined || value === "") return undefined
  if (DAY.test(value)) return value
  if (/^\d{4}-\d{2}$/.test(value)) {
    if (!end) return `${value}-01`
    const [y, m] = value.split("-").map(Number) as [number, number]
    return new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10)
  }
  if (/^\d{4}$/.test(value)) return end ? `${value}-12-31` : `${value}-01-01`
  return "invalid"
}

const HoldBody = Schema.Struct({
  day: Schema.String.pipe(Schema.pattern(DAY)),
  currency: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.pattern(/^[A-Z]{3}$/))))
})

const SwitchesBody = Schema.Struct({
  ...faultSwitchFields(500, 502, 503, 504),
  source: Schema.optional(Schema.Literal("norges_bank", "ecb"))
})

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

const bodyOf = <A, I>(schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* Effect.orElseSucceed(request.text, () => "")
    const raw = yield* Effect.try(() => (text.trim() === "" ? {} : JSON.parse(text) as unknown))
    return yield* Schema.decodeUnknown(schema)(raw)
  })

const badRequest = (e: unknown) => Effect.succeed(json({ message: `Invalid request: ${String(e)}` }, 400))

export const startRatesSandbox = (options: SandboxOptions = {}) =>
  Effect.gen(function*() {
    const { server, port, baseUrl } = yield* listen(options)
    const faults = yield* makeFaults({
      defaults: NO_FAULTS,
      scopeOf,
      errorBody: (status) => ({ message: status === 503 ? "Service Unavailable" : "Internal Server Error" })
    })
    const heldRef = yield* Ref.make<ReadonlyArray<HeldRate>>([])

    const sandbox: RatesSandbox = {
      baseUrl,
      port,
      faults,
      requests: faults.requests,
      hold: (day, currency) =>
        Ref.update(heldRef, (held) => [...held.filter((h) => !(h.day === day && h.currency === (currency ?? null))), {
          day,
          currency: currency ?? null
        }]),
      release: (day) => Ref.update(heldRef, (held) => (day === undefined ? [] : held.filter((h) => h.day !== day))),
      held: Ref.get(heldRef)
    }

    const query = (source: RateSourceScope) =>
      Effect.gen(function*() {
        const params = yield* HttpServerRequest.ParsedSearchParams
        const key = decodeURIComponent((yield* HttpRouter.params).key ?? "")
        const text = (name: string) => (typeof params[name] === "string" ? params[name] as string : undefined)
        const parts = key.split(".")
        // Norges Bank: FREQ.BASE_CUR.QUOTE_CUR.TENOR; the ECB: FREQ.CURRENCY.CURRENCY_DENOM.EXR_TYPE.EXR_SUFFIX.
        const valid = source === "norges_bank"
          ? parts.length === 4 && parts[0] === "B" && (parts[2] === "" || parts[2] === "NOK")
          : parts.length === 5 && parts[0] === "D" && (parts[2] === "" || parts[2] === "EUR")
        const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
        const from = periodDay(text("startPeriod"), false) ?? "1999-01-01"
        const to = periodDay(text("endPeriod"), true) ?? "2099-12-31"
        const held = yield* Ref.get(heldRef)
        return {
          valid: valid && from !== "invalid" && to !== "invalid",
          format: text("format"),
          q: {
            currencies: parts[1] === "" || parts[1] === undefined ? [] : parts[1].split("+"),
            from,
            to,
            today,
            held: (currency: string, day: string) =>
              held.some((h) => h.day === day && (h.currency === null || h.currency === currency))
          }
        }
      })

    const noResults = (source: RateSourceScope) =>
      source === "norges_bank"
        ? HttpServerResponse.text("NoResultsFound: No data found for the query", { status: 404 })
        : HttpServerResponse.text("No results found.", { status: 404 })

    const norgesBank = Effect.gen(function*() {
      const { format, q, valid } = yield* query("norges_bank")
      if (!valid) return HttpServerResponse.text("Bad Request: the key does not fit EXR", { status: 400 })
      if (format !== undefined && format !== "sdmx-json") {
        return HttpServerResponse.text(`Bad Request: the sandbox serves format=sdmx-json only`, { status: 400 })
      }
      const body = renderSdmxJson(q, new Date(yield* Clock.currentTimeMillis).toISOString())
      return body === null
        ? noResults("norges_bank")
        : HttpServerResponse.unsafeJson(body, {
          headers: { "content-type": "application/vnd.sdmx.data+json; charset=utf-8" }
        })
    })

    const ecb = Effect.gen(function*() {
      const { format, q, valid } = yield* query("ecb")
      if (!valid) return HttpServerResponse.text("Bad Request: the key does not fit EXR", { status: 400 })
      if (format !== undefined && format !== "csvdata") {
        return HttpServerResponse.text(`Bad Request: the sandbox serves format=csvdata only`, { status: 400 })
      }
      const body = renderEcbCsv(q)
      return body === null ? noResults("ecb") : HttpServerResponse.text(body, { contentType: "text/csv" })
    })

    const stateOf = Effect.map(faults.get, (s) => ({ all: s.all, sources: Object.fromEntries(s.scoped) }))

    const admin = HttpRouter.empty.pipe(
      HttpRouter.get("/sandbox/faults", Effect.map(stateOf, (s) => json(s))),
      HttpRouter.put(
        "/sandbox/faults",
        Effect.gen(function*() {
          const { source, ...settings } = yield* bodyOf(SwitchesBody)
          yield* faults.set(settings, source)
          return json(yield* stateOf)
        }).pipe(Effect.catchAll(badRequest))
      ),
      HttpRouter.post(
        "/sandbox/reset",
        Effect.as(Effect.zipRight(faults.reset, sandbox.release()), json({ reset: true }))
      ),
      HttpRouter.get(
        "/sandbox/requests",
        Effect.gen(function*() {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const filter = {
            ...(typeof params.source === "string" ? { scope: params.source } : {}),
            ...(typeof params.path === "string" ? { path: params.path } : {})
          }
          return json({ count: yield* faults.requests.count(filter), requests: yield* faults.requests.list })
        })
      ),
      HttpRouter.get("/sandbox/held", Effect.map(sandbox.held, (held) => json({ held }))),
      HttpRouter.put(
        "/sandbox/held",
        Effect.gen(function*() {
          const body = yield* bodyOf(HoldBody)
          yield* sandbox.hold(body.day, body.currency ?? undefined)
          return json({ held: yield* sandbox.held })
        }).pipe(Effect.catchAll(badRequest))
      ),
      HttpRouter.del(
        "/sandbox/held",
        Effect.gen(function*() {
          const params = yield* HttpServerRequest.ParsedSearchParams
          yield* sandbox.release(typeof params.day === "string" && params.day !== "" ? params.day : undefined)
          return json({ held: yield* sandbox.held })
        })
      ),
      HttpRouter.get(
        "/sandbox/rates",
        Effect.gen(function*() {
          const params = yield* HttpServerRequest.ParsedSearchParams
          const currency = String(params.currency ?? "")
          const day = String(params.day ?? "")
          if (SERIES[currency] === undefined || !DAY.test(day)) return json({ message: "unknown currency or day" }, 400)
          return json({
            currency,
            day,
            nokPerUnit: nokPerUnit(currency, day),
            norgesBank: { value: norgesBankValue(currency, day), unitMult: SERIES[currency]!.unitMult },
            ecb: { nokPerEur: ecbValue("NOK", day), unitsPerEur: currency === "EUR" ? 1 : ecbValue(currency, day) }
          })
        })
      )
    )

    const app = HttpRouter.concatAll(
      HttpRouter.empty.pipe(
        HttpRouter.get("/api/data/EXR/:key", norgesBank),
        HttpRouter.get("/service/data/EXR/:key", ecb)
      ),
      admin
    )
    // The sandbox stands in for a system we do not own: its requests are not the service's spans.
    yield* server.serve(faults.middleware(answeredToTheEnd(app))).pipe(
      Effect.locally(HttpMiddleware.currentTracerDisabledWhen, () => true)
    )
    yield* Effect.logDebug(`rates sandbox listening on ${baseUrl}`)
    return sandbox
  }).pipe(Effect.orDie, Effect.withSpan("RatesSandbox.start"))

/** The running sandbox, for layers and tests. */
export class RatesSandboxService extends Context.Tag("Sandbox/RatesSandbox")<RatesSandboxService, RatesSandbox>() {}

/** A sandbox for the layer's lifetime. */
export const RatesSandboxLive = (options: SandboxOptions = {}) =>
  Layer.scoped(RatesSandboxService, startRatesSandbox(options))
