/**
 * Reads the gauges that need a look at the database or the pools (outbox backlog and age, refunds
 * and charges pending, pool connections and waits) once per metric export interval, and only when
 * metrics are exported (OTEL_EXPORTER_OTLP_ENDPOINT): a request never pays for them. A failed read
 * is logged and the next interval tries again.
 */
import { Duration, Effect, Layer, Metric, Option, Schedule } from "effect"
import { AppConfig } from "../config.js"
import { poolStats } from "../db/pools.js"
import { GaugesRepo } from "./GaugesRepo.js"
import {
  chargesPending,
  dbConnections,
  dbConnectionsMax,
  dbPendingRequests,
  outboxBacklog,
  outboxOldestAge,
  refundsPending
} from "./metrics.js"

const set = (gauge: Metric.Metric.Gauge<number>, value: number, labels: Record<string, string> = {}) =>
  Metric.set(Object.entries(labels).reduce((tagged, [key, label]) => Metric.tagged(tagged, key, label), gauge), value)

const readPools = Effect.suspend(() =>
  Effect.forEach(poolStats(), (pool) =>
    Effect.all([
      set(dbConnections, pool.total - pool.idle, { pool: pool.name, state: "used" }),
      set(dbConnections, pool.idle, { pool: pool.name, state: "idle" }),
      set(dbConnectionsMax, pool.max, { pool: pool.name }),
      set(dbPendingRequests, pool.waiting, { pool: pool.name })
    ]), { discard: true })
)

const readDatabase = Effect.gen(function*() {
  const row = yield* (yield* GaugesRepo).read()
  yield* Effect.all([
    set(outboxBacklog, row.outbox_backlog),
    set(outboxOldestAge, row.outbox_oldest_age ?? 0),
    set(refundsPending, row.booking_refunds, { kind: "booking" }),
    set(refundsPending, row.payment_link_refunds, { kind: "payment_link" }),
    set(refundsPending, row.quickbook_refunds, { kind: "quickbook" }),
    set(chargesPending, row.charges_upcoming - row.charges_upcoming_due, { state: "upcoming", due: "false" }),
    set(chargesPending, row.charges_upcoming_due, { state: "upcoming", due: "true" }),
    set(chargesPending, row.charges_retrying - row.charges_retrying_due, { state: "retrying", due: "false" }),
    set(chargesPending, row.charges_retrying_due, { state: "retrying", due: "true" })
  ])
})

export const readGauges = Effect.zipRight(readPools, readDatabase).pipe(
  Effect.catchAllCause((cause) => Effect.logWarning("metrics: could not read the gauges", cause)),
  Effect.withTracerEnabled(false)
)

/** The reader, forked for the life of the service; nothing when metrics are not exported. */
export const GaugesLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.isNone(config.otlpEndpoint)
    ? Layer.empty
    : Layer.scopedDiscard(
      readGauges.pipe(
        Effect.repeat(Schedule.spaced(Duration.millis(config.metricExportIntervalMs))),
        Effect.forkScoped
      )
    ).pipe(Layer.provide(GaugesRepo.Default))))
