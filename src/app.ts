/** The running service: database (embedded or DATABASE_URL), migrations, demo data, HTTP server. */
import { HttpServer } from "@effect/platform"
import { Effect, Layer } from "effect"
import * as path from "node:path"
import { ExchangeRatesSourcesLive, ExternalSystemsLive, OutboxLive } from "./adapters/live.js"
import { AssistantConfig } from "./assistant/config.js"
import { mcpUrlOf } from "./assistant/Http.js"
import { TourSeason } from "./catalogue/TourSeason.js"
import { AppConfig, baseUrlOf } from "./config.js"
import { DatabaseUrl, layerFromUrl } from "./db/Database.js"
import { DemoData } from "./demo/DemoData.js"
import { localDayAt } from "./domain/localDay.js"
import { Outbox } from "./email/Outbox.js"
import { HttpLive, nodeServer } from "./Http.js"
import { ensurePortFree } from "./http/portCheck.js"
import { JobsLive } from "./jobs/index.js"
import { Mirror } from "./mirror/Mirror.js"
import { GaugesLive } from "./observability/gauges.js"
import { BookingSystemAccounts } from "./operators/BookingSystemAccounts.js"
import { IdempotencyStore } from "./partner/writes/IdempotencyStore.js"
import { DailyRates } from "./rates/DailyRates.js"
import { SalesLedger } from "./sales/SalesLedger.js"

const announce = Effect.gen(function*() {
  const config = yield* AppConfig
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : config.port
  const base = baseUrlOf(config, port)
  const demo = yield* DemoData
  const lines = [
    `Partner API listening on ${base}/api/v1`,
    `  reference:  ${base}/api/v1/docs   (OpenAPI: ${base}/api/v1/openapi.json)`
  ]
  if (demo.keysFile) {
    lines.push(
      `  demo keys:  ${path.resolve(demo.keysFile)}`,
      `  try:        curl -s -H "Authorization: Bearer ${
        demo.sampleKey ?? "<a key from demo.json>"
      }" ${base}/api/v1/bookings?limit=2`
    )
    if (demo.manifestKey) {
      lines.push(
        `  manifest:   curl -s -H "Authorization: Bearer ${demo.manifestKey}" "${base}/api/v1/manifest?date=${
          localDayAt("Europe/Oslo", new Date())
        }"`
      )
    }
  }
  const mcpUrl = mcpUrlOf(yield* AssistantConfig, base)
  lines.push(
    `MCP server (for AI assistants) on ${mcpUrl}`,
    demo.keysFile
      ? `  sign in:    a demo person of ${path.resolve(demo.keysFile)} (mcp.users); docs/assistant.md`
      : "  sign in:    a person with a password (npm run cli -- assistant set-password --user EMAIL)"
  )
  if (demo.sandboxUrl) lines.push(`  sandbox booking system (Bókun dialect): ${demo.sandboxUrl}`)
  const outbox = yield* Outbox
  lines.push(
    outbox.transport === "smtp"
      ? "  email:      sent through SMTP (SMTP_URL)"
      : "  email:      local mailbox, no SMTP_URL set (npm run cli -- mail list)"
  )
  // A terminal gets the banner; a log collector (LOG_FORMAT json or logfmt) one event, without the
  // demo key (docs/observability.md).
  if (config.logFormat !== "pretty") {
    return yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({
      partner_api: `${base}/api/v1`,
      reference: `${base}/api/v1/docs`,
      mcp: mcpUrl,
      ...(demo.keysFile ? { demo_keys: path.resolve(demo.keysFile) } : {}),
      ...(demo.sandboxUrl ? { sandbox: demo.sandboxUrl } : {}),
      email: outbox.transport
    }))
  }
  yield* Effect.sync(() => console.log(lines.join("\n")))
})

/**
 * What reads the operators' booking systems in the background: the mirror, the catalogue's
 * season cache and the sales ledger, through the real adapters (which it also gives).
 */
export const MirrorLive = Layer.mergeAll(Mirror.Default, TourSeason.Default, SalesLedger.Default).pipe(
  Layer.provideMerge(BookingSystemAccounts.Default),
  Layer.provideMerge(ExternalSystemsLive)
)

/** The daily exchange rates (src/rates/) over their sources; needs the SqlClient. */
export const RatesLive = DailyRates.Default.pipe(Layer.provideMerge(ExchangeRatesSourcesLive))

export const ServiceLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    // Before anything starts: a port in use stops the start naming PORT, not after the demo's setup.
    yield* ensurePortFree("PORT", config.host, config.port)
    const url = yield* DatabaseUrl
    const database = layerFromUrl(url, config.dbPoolSize)
    return Layer.effectDiscard(announce).pipe(
      Layer.provideMerge(HttpLive),
      Layer.provide(nodeServer(config.host, config.port)),
      Layer.provideMerge(DemoData.layer),
      Layer.provideMerge(JobsLive.pipe(Layer.provide(IdempotencyStore.Default))),
      Layer.provideMerge(GaugesLive),
      Layer.provideMerge(OutboxLive),
      Layer.provideMerge(RatesLive),
      Layer.provideMerge(MirrorLive),
      Layer.provideMerge(database)
    )
  })
)
