/**
 * The demo's exchange rates: with no EXCHANGE_RATES_*_URL set in demo mode (DEMO_DATA, on by default
 * with the embedded database), the rates sandbox is started in-process on a free port for the life
 * of the service and serves both sources (src/sandbox/rates/), as the demo's Surfboard sandbox does
 * for payments. At start the demo fills the last 400 days (one request, `setUpDemoRates`), so the
 * sales summary has a rate for every banking day from the first request.
 */
import { Effect, Option } from "effect"
import { AppConfig } from "../config.js"
import { DailyRates } from "../rates/DailyRates.js"
import { startRatesSandbox } from "../sandbox/rates/index.js"

/** The sandbox's base URL in demo mode (started for the scope), none otherwise. */
export const demoRatesSandbox = Effect.gen(function*() {
  const config = yield* AppConfig
  const demo = Option.getOrElse(config.demoData, () => Option.isNone(config.databaseUrl))
  if (!demo) return Option.none<string>()
  const sandbox = yield* startRatesSandbox({ port: 0 })
  yield* Effect.logInfo(`demo exchange rates (Norges Bank and ECB sandbox) on ${sandbox.baseUrl}`)
  return Option.some(sandbox.baseUrl)
})

/** The last 400 days' rates, fetched again on every demo start (idempotent; one request per source). */
export const setUpDemoRates = Effect.gen(function*() {
  const rates = yield* DailyRates
  const result = yield* rates.refreshRecent(400)
  yield* Effect.logInfo(
    `demo exchange rates: ${result.fetched} daily rates from ${result.from} to ${result.to} (${result.stored} new or changed)`
  )
}).pipe(
  // The demo starts without rates rather than not at all; the job fetches them later.
  Effect.catchAll((e) => Effect.logWarning(`demo exchange rates not fetched: ${e._tag}`)),
  Effect.withSpan("Demo.setUpRates")
)
