/**
 * The exchange-rate adapter through the ExchangeRates port, over real HTTP against the rates sandbox:
 * Norges Bank's SDMX-JSON (UNIT_MULT: SEK and DKK quoted per 100), one request for a whole range, the
 * ECB's csvdata as the fallback when Norges Bank is down or fails, a hang that ends in a timeout,
 * an empty range, and a rate held back (late) then published.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { exchangeRatesLayer } from "../../../src/adapters/ExchangeRatesLive.js"
import { type DailyRate, ExchangeRates, type ExchangeRatesError } from "../../../src/ports/ExchangeRates.js"
import { isBankingDay, nokPerUnit, RatesSandboxService } from "../../../src/sandbox/rates/index.js"
import { dayFromToday, ratesEnv } from "./env.js"

const CURRENCIES = ["EUR", "USD", "SEK", "DKK", "GBP"]

const failureOf = <A, R>(effect: Effect.Effect<A, ExchangeRatesError, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value).slice(0, 200)}`)
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    if (!failure) throw new Error(`expected an ExchangeRatesError, got ${String(exit.cause)}`)
    return failure
  })

const withReset = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    RatesSandboxService,
    (sandbox) =>
      Effect.ensuring(
        Effect.zipRight(sandbox.faults.reset, effect),
        Effect.zipRight(sandbox.faults.reset, sandbox.release())
      )
  )

const key = (r: DailyRate) => `${r.currency} ${r.day}`

/** The banking days of [from, to]. */
const bankingDaysOf = (from: string, to: string) => {
  const days: Array<string> = []
  for (let d = from; d <= to; d = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) {
    if (isBankingDay(d)) days.push(d)
  }
  return days
}

layer(ratesEnv(), { excludeTestServices: true, timeout: 60_000 })("exchange rates adapter", (it) => {
  const from = dayFromToday(-40)
  const to = dayFromToday(-1)

  it.effect("reads Norges Bank: NOK per one unit of every currency, per-100 quotes divided by 10^UNIT_MULT", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const rates = yield* (yield* ExchangeRates).dailyRates({ currencies: [...CURRENCIES, "NOK"], from, to })
      const days = bankingDaysOf(from, to)
      expect(days.length).toBeGreaterThan(20)
      expect(rates.map(key).sort()).toEqual(CURRENCIES.flatMap((c) => days.map((d) => `${c} ${d}`)).sort())
      for (const r of rates) {
        expect(r.source).toBe("norges_bank")
        expect(r.nokPerUnit, key(r)).toBe(nokPerUnit(r.currency, r.day))
      }
      // UNIT_MULT: the SEK series is quoted per 100 (~98.5 NOK), stored per krona (~0.985).
      const sek = rates.find((r) => r.currency === "SEK")!
      expect(sek.nokPerUnit).toBeGreaterThan(0.9)
      expect(sek.nokPerUnit).toBeLessThan(1.1)
      const eur = rates.find((r) => r.currency === "EUR")!
      expect(eur.nokPerUnit).toBeGreaterThan(11)
      expect(eur.nokPerUnit).toBeLessThan(12)
      // The whole range in one request, to Norges Bank only.
      expect(yield* sandbox.requests.count({ scope: "norges_bank" })).toBe(1)
      expect(yield* sandbox.requests.count({ scope: "ecb" })).toBe(0)
    })))

  it.effect("falls back to the ECB's reference rates when Norges Bank is down: the same days, cross rates through the euro", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      yield* sandbox.faults.set({ down: true }, "norges_bank")
      const rates = yield* (yield* ExchangeRates).dailyRates({ currencies: CURRENCIES, from, to })
      const days = bankingDaysOf(from, to)
      expect(rates.map(key).sort()).toEqual(CURRENCIES.flatMap((c) => days.map((d) => `${c} ${d}`)).sort())
      for (const r of rates) {
        expect(r.source).toBe("ecb")
        const nb = nokPerUnit(r.currency, r.day)!
        // NOK per EUR is the same figure; a cross rate differs only by the ECB's 4-decimal rounding.
        if (r.currency === "EUR") expect(r.nokPerUnit).toBe(nb)
        else expect(Math.abs(r.nokPerUnit / nb - 1), key(r)).toBeLessThan(2e-4)
      }
      expect(yield* sandbox.requests.count({ scope: "norges_bank" })).toBe(2) // the first attempt and one retry
      expect(yield* sandbox.requests.count({ scope: "ecb" })).toBe(1)
    })))

  it.effect("falls back on 5xx from Norges Bank too", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      yield* sandbox.faults.set({ errorRate: 1, errorStatus: 503 }, "norges_bank")
      const rates = yield* (yield* ExchangeRates).dailyRates({ currencies: ["EUR"], from, to })
      expect(rates.length).toBeGreaterThan(20)
      expect(new Set(rates.map((r) => r.source))).toEqual(new Set(["ecb"]))
    })))

  it.effect("a source that hangs ends in a timeout; both hanging is ExchangeRatesUnavailable", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const port = yield* ExchangeRates
      yield* sandbox.faults.set({ hang: true }, "norges_bank")
      const fallback = yield* port.dailyRates({ currencies: ["USD"], from, to })
      expect(fallback.length).toBeGreaterThan(20)
      expect(fallback.every((r) => r.source === "ecb")).toBe(true)
      yield* sandbox.faults.set({ hang: true })
      const failure = yield* failureOf(port.dailyRates({ currencies: ["USD"], from, to }))
      expect(failure._tag).toBe("ExchangeRatesUnavailable")
      expect(failure._tag === "ExchangeRatesUnavailable" && failure.reason).toBe("timeout")
      expect(failure.source).toBe("ecb")
    })))

  it.effect("a range without a banking day is empty (SDMX's 404 'no results'), not an error", () =>
    withReset(Effect.gen(function*() {
      const port = yield* ExchangeRates
      // A Saturday and Sunday within the sandbox's window.
      let saturday = dayFromToday(-10)
      while (new Date(`${saturday}T00:00:00Z`).getUTCDay() !== 6) {
        saturday = new Date(Date.parse(`${saturday}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
      }
      const sunday = new Date(Date.parse(`${saturday}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
      expect(yield* port.dailyRates({ currencies: CURRENCIES, from: saturday, to: sunday })).toEqual([])
      expect(yield* port.dailyRates({ currencies: ["NOK"], from, to }), "NOK needs no source").toEqual([])
      const sandbox = yield* RatesSandboxService
      yield* sandbox.faults.set({ down: true }, "norges_bank")
      expect(yield* port.dailyRates({ currencies: CURRENCIES, from: saturday, to: sunday }), "the ECB too").toEqual([])
    })))

  it.effect("a rate held back is missing from the answer until it is published", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      const port = yield* ExchangeRates
      const day = bankingDaysOf(from, to).at(-1)!
      yield* sandbox.hold(day)
      const before = yield* port.dailyRates({ currencies: CURRENCIES, from: day, to: day })
      expect(before).toEqual([])
      yield* sandbox.hold(day, "USD")
      yield* sandbox.release(day)
      const after = yield* port.dailyRates({ currencies: CURRENCIES, from: day, to: day })
      expect(after.map((r) => r.currency).sort()).toEqual(CURRENCIES.slice().sort())
    })))

  it.effect("errors from both sources: 5xx is ExchangeRatesUnavailable http_5xx", () =>
    withReset(Effect.gen(function*() {
      const sandbox = yield* RatesSandboxService
      yield* sandbox.faults.set({ errorRate: 1, errorStatus: 502 })
      const failure = yield* failureOf((yield* ExchangeRates).dailyRates({ currencies: ["EUR"], from, to }))
      expect(failure._tag).toBe("ExchangeRatesUnavailable")
      expect(failure._tag === "ExchangeRatesUnavailable" && failure.reason).toBe("http_5xx")
    })))
})

describe("sources that cannot be reached", () => {
  layer(NodeHttpClient.layer, { excludeTestServices: true })((it) => {
    it.effect("a base URL that refuses connections is ExchangeRatesUnavailable connection", () =>
      Effect.gen(function*() {
        const refused = exchangeRatesLayer({
          norgesBankUrl: "http://127.0.0.1:9",
          ecbUrl: "http://127.0.0.1:9",
          timeout: "400 millis",
          retries: 0
        })
        const failure = yield* failureOf(
          Effect.flatMap(
            ExchangeRates,
            (port) => port.dailyRates({ currencies: ["EUR"], from: "2026-01-05", to: "2026-01-09" })
          ).pipe(Effect.provide(refused))
        )
        expect(failure._tag).toBe("ExchangeRatesUnavailable")
        expect(failure._tag === "ExchangeRatesUnavailable" && failure.reason).toBe("connection")
      }))
  })
})
