/**
 * The demo at start (DEMO_DATA on): the dataset on an empty database (./seed.ts), the in-process
 * sandboxes it links to, and what every start refreshes so the first requests find everything ready
 * (the mirror, the catalogue's season, the sales ledger and rollups, the rates, the site traffic).
 */
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { AnalyticsRollups } from "../analytics/AnalyticsRollups.js"
import { AnalyticsRollupsRepo } from "../analytics/AnalyticsRollupsRepo.js"
import { AssistantConfig } from "../assistant/config.js"
import { mcpUrlOf } from "../assistant/Http.js"
import { TourSeason } from "../catalogue/TourSeason.js"
import { AppConfig, baseUrlOf } from "../config.js"
import { ensurePortFree, PortUnavailable } from "../http/portCheck.js"
import { Mirror } from "../mirror/Mirror.js"
import { Operators } from "../operators/Operators.js"
import { PublishableKeys } from "../partner/auth/PublishableKeys.js"
import { QuickbookKeys } from "../quickbook/terminals/QuickbookKeys.js"
import { DailyRatesRepo } from "../rates/DailyRatesRepo.js"
import { SalesLedger } from "../sales/SalesLedger.js"
import { SalesRollups } from "../sales/SalesRollups.js"
import { startSandbox } from "../sandbox/bokun/index.js"
import { startSandbox as startPaymentSandbox } from "../sandbox/surfboard/index.js"
import { seedDemoTraffic } from "./analyticsTraffic.js"
import { setUpDemoAssistant } from "./assistant.js"
import { DEMO_DAYS_AHEAD, setUpDemoBookingSystem } from "./bookingSystem.js"
import { issueDemoInvoices } from "./financeInvoices.js"
import { setUpDemoPayLater } from "./financePayLater.js"
import { setUpDemoPayouts } from "./financePayouts.js"
import { deskCardTerminals, setUpDemoPaymentProvider } from "./paymentProvider.js"
import { setUpDemoRates } from "./rates.js"
import { type DemoFile, seedDemo } from "./seed.js"

/** The demo desks in demo.json get their card terminal, in the database and in the file. */
const recordDeskCardTerminals = (file: string, payments: Parameters<typeof deskCardTerminals>[0]) =>
  Effect.gen(function*() {
    if (!fs.existsSync(file)) return
    const demo = JSON.parse(fs.readFileSync(file, "utf8")) as DemoFile
    const terminals = demo.quickbook?.terminals ?? []
    const cards = yield* deskCardTerminals(payments, terminals.map((t) => t.id))
    const updated = terminals.map((t) => ({ ...t, paymentTerminalId: cards.get(t.id) ?? null }))
    const unchanged = updated.every((t, i) => t.paymentTerminalId === terminals[i]!.paymentTerminalId) &&
      demo.quickbook?.paymentSandboxUrl === payments.baseUrl
    if (unchanged) return
    const quickbook = { ...demo.quickbook, terminals: updated, paymentSandboxUrl: payments.baseUrl }
    fs.writeFileSync(file, JSON.stringify({ ...demo, quickbook }, null, 2) + "\n", { mode: 0o600 })
  })

export class DemoData extends Context.Tag("Demo/DemoData")<DemoData, {
  readonly keysFile: string | undefined
  readonly sampleKey: string | undefined
  /** A key that reads the manifest, for the printed hint. */
  readonly manifestKey: string | undefined
  /** Where the demo's sandbox booking system listens, when the demo runs. */
  readonly sandboxUrl: string | undefined
}>() {
  /**
   * Demo mode (DEMO_DATA, default on with the embedded database): seeds an empty database, starts
   * the sandbox booking system for the life of the service, links the demo accounts to it,
   * mirrors the coming days so that the manifest is full from the first request and computes the
   * catalogue's `from_price` and `season` so that the tour list shows them; starts the
   * Surfboard sandbox with a merchant per operator so that payment links work.
   */
  static readonly layer = Layer.scoped(
    DemoData,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const sql = yield* SqlClient.SqlClient
      const file = path.join(config.dataDir, "demo.json")
      const read = (sandboxUrl?: string) => {
        if (!fs.existsSync(file)) {
          return { keysFile: undefined, sampleKey: undefined, manifestKey: undefined, sandboxUrl }
        }
        const demo = JSON.parse(fs.readFileSync(file, "utf8")) as DemoFile
        const active = demo.keys.filter((k) => k.state === "active")
        return {
          keysFile: file,
          sampleKey: active[0]?.secret,
          manifestKey: active.find((k) => k.scopes.includes("manifest:read"))?.secret,
          sandboxUrl
        }
      }
      const wanted = Option.getOrElse(config.demoData, () => Option.isNone(config.databaseUrl))
      if (!wanted) return read()
      yield* ensurePortFree("SANDBOX_PORT", "127.0.0.1", config.sandboxPort)
      const [{ count }] = (yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM operators`) as unknown as [
        { count: number }
      ]
      if (count === 0) {
        yield* Effect.logInfo("empty database: creating the demo dataset")
        const demo = yield* sql.withTransaction(seedDemo).pipe(
          Effect.provide([Operators.Default, PublishableKeys.Default, QuickbookKeys.Default])
        )
        fs.mkdirSync(config.dataDir, { recursive: true })
        fs.writeFileSync(file, JSON.stringify(demo, null, 2) + "\n", { mode: 0o600 })
        yield* Effect.logInfo(`demo dataset created; keys written to ${file}`)
      }
      const sandbox = yield* startSandbox({ port: config.sandboxPort })
      yield* setUpDemoBookingSystem(sandbox)
      const mirror = yield* Mirror
      yield* mirror.refresh({ kind: "manual", daysAhead: DEMO_DAYS_AHEAD })
      // The sales ledger: yesterday's and today's sales before the first request; the 400 days of
      // history (first start only) right after, in the background, in one unpaced step per account
      // (the sandbox is ours; a few seconds), so the start does not wait for it. The jobs keep it fresh.
      // The sales rollups follow each (the job takes in later changes every minute, too).
      const ledger = yield* SalesLedger
      const rollups = yield* Effect.provide(SalesRollups, SalesRollups.Default)
      yield* ledger.refreshRecent({ pagePauseMs: 0, retries: 0 })
      yield* Effect.forkScoped(
        Effect.zipRight(ledger.backfill({ pagePauseMs: 0, chunkDays: 400, retries: 0 }), rollups.refresh())
      )
      // The catalogue's from_price and season, so the first tour list shows prices and dates.
      const season = yield* (yield* TourSeason).refresh()
      yield* Effect.logInfo(
        `demo catalogue: from_price and season of ${season.known} of ${season.tours} linked tours computed`
      )
      yield* Effect.logInfo(`demo booking system (Bókun sandbox) on ${sandbox.baseUrl}`)
      const payments = yield* startPaymentSandbox({ port: 0 })
      yield* setUpDemoPaymentProvider(payments)
      yield* setUpDemoPayLater(payments)
      yield* recordDeskCardTerminals(file, payments)
      yield* setUpDemoPayouts(payments)
      yield* Effect.logInfo(`demo payment provider (Surfboard sandbox) on ${payments.baseUrl}`)
      yield* issueDemoInvoices
      // Rates for every banking day of the last 400 days (the sources: src/demo/rates.ts).
      yield* setUpDemoRates
      // The sales rollups at once, so GET /sales answers from the first request.
      yield* rollups.refresh()
      // Site traffic (first start: 400 days, the last 35 as raw events; src/demo/analyticsTraffic.ts),
      // then the analytics rollups take in every raw event before the service says it is ready.
      const [seeded, traffic] = yield* Effect.timed(
        sql.withTransaction(seedDemoTraffic(Date.now())).pipe(
          Effect.provide([AnalyticsRollupsRepo.Default, DailyRatesRepo.Default])
        )
      )
      const [rolled, analytics] = yield* Effect.timed(
        Effect.flatMap(AnalyticsRollups, (r) => r.refresh()).pipe(Effect.provide(AnalyticsRollups.Default))
      )
      yield* Effect.logInfo(
        `demo site traffic: ${traffic.days} site-days of daily rows and ${traffic.rawEvents} raw events written ` +
          `(${Math.round(Duration.toMillis(seeded))} ms); the analytics rollups took in ${analytics.events} events ` +
          `(${Math.round(Duration.toMillis(rolled))} ms)`
      )
      // The people who sign in to the MCP server, and its URL, in demo.json (`mcp`).
      yield* setUpDemoAssistant(file, mcpUrlOf(yield* AssistantConfig, baseUrlOf(config)))
      return read(sandbox.baseUrl)
    }).pipe(Effect.catchAll((e) => e instanceof PortUnavailable ? Effect.fail(e) : Effect.die(e)))
  )
}
