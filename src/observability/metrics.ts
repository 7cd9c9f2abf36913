/**
 * The metrics an SRE alerts on, as Effect metrics (exported over OTLP by ./otlp.ts when
 * OTEL_EXPORTER_OTLP_ENDPOINT is set; kept in memory, cheaply, otherwise). Labels are bounded sets
 * (route templates, methods, statuses, job names, outcomes): never an id, a raw path or a secret.
 * docs/observability.md lists each with its labels.
 */
import { Effect, Metric, MetricBoundaries, type MetricHook, MetricKey, MetricLabel, type MetricState } from "effect"

/** Seconds, from 5 ms to ~20 s. */
const SECONDS = MetricBoundaries.exponential({ start: 0.005, factor: 2, count: 13 })

const REQUEST_DURATION = "http.server.request.duration"
const REQUEST_DURATION_HELP = "Duration of HTTP requests served, in seconds, by api, method, route template and status"

export const httpRequestDuration = Metric.histogram(REQUEST_DURATION, SECONDS, REQUEST_DURATION_HELP)

/**
 * The registry's hook of each label set (a bounded set: APIs × methods × routes × statuses), looked
 * up once: `Metric.update` on a tagged metric derives and hashes its key on every call (about 9 µs
 * a request), a hook's `update` costs well under 1 µs.
 */
const requestSeries = new Map<string, MetricHook.MetricHook<number, MetricState.MetricState.Histogram>>()

/** Records one request; `route` is the template (`/api/v1/bookings/{id}`) or `unmatched`. */
export const recordRequestNow = (
  labels: { readonly api: string; readonly method: string; readonly route: string; readonly status: number },
  seconds: number
): void => {
  const name = `${labels.api} ${labels.method} ${labels.status} ${labels.route}`
  let hook = requestSeries.get(name)
  if (hook === undefined) {
    const key = MetricKey.taggedWithLabels(MetricKey.histogram(REQUEST_DURATION, SECONDS, REQUEST_DURATION_HELP), [
      MetricLabel.make("api", labels.api),
      MetricLabel.make("http.request.method", labels.method),
      MetricLabel.make("http.route", labels.route),
      MetricLabel.make("http.response.status_code", String(labels.status))
    ])
    hook = Metric.globalMetricRegistry.get(key)
    requestSeries.set(name, hook)
  }
  hook.update(seconds)
}

/** `recordRequestNow` as an effect. */
export const recordRequest = (
  labels: { readonly api: string; readonly method: string; readonly route: string; readonly status: number },
  seconds: number
) => Effect.sync(() => recordRequestNow(labels, seconds))

export const rateLimitRefusals = Metric.counter("rate_limit.refusals", {
  description: "Requests refused by a per-window rate limit (429), by bucket kind",
  incremental: true
})

/** Counts one refusal of a bucket of `kind` (`partner`, `publishable`, `quickbook:reads`, `signin` …). */
export const countRefusal = (kind: string) => Metric.increment(Metric.tagged(rateLimitRefusals, "bucket", kind))

export const jobRuns = Metric.counter("job.runs", {
  description: "Scheduled job runs, by job and outcome (ok, failed, skipped: the slot already ran)",
  incremental: true
})

export const jobDuration = Metric.histogram(
  "job.duration",
  SECONDS,
  "Duration of job runs in seconds, by job and outcome"
)

export const recordJobRun = (job: string, outcome: "ok" | "failed" | "skipped", seconds?: number) =>
  Effect.zipRight(
    Metric.increment(Metric.tagged(Metric.tagged(jobRuns, "job", job), "outcome", outcome)),
    seconds === undefined
      ? Effect.void
      : Metric.update(jobDuration.pipe(Metric.tagged("job", job), Metric.tagged("outcome", outcome)), seconds)
  )

// Gauges, read on the export interval (./gauges.ts).
export const dbConnections = Metric.gauge("db.client.connection.count", {
  description: "Connections of this instance's pools, by pool and state (idle, used)"
})
export const dbConnectionsMax = Metric.gauge("db.client.connection.max", {
  description: "Most connections a pool of this instance may open, by pool"
})
export const dbPendingRequests = Metric.gauge("db.client.connection.pending_requests", {
  description: "Queries waiting for a free connection, by pool"
})
export const outboxBacklog = Metric.gauge("outbox.backlog", {
  description: "Emails not yet sent (pending or being sent)"
})
export const outboxOldestAge = Metric.gauge("outbox.oldest_age", {
  description: "Age in seconds of the oldest email not yet sent (0 when none)"
})
export const refundsPending = Metric.gauge("refunds.pending", {
  description: "Refunds asked of the payment provider and not settled, by kind (booking, payment_link, quickbook)"
})
export const chargesPending = Metric.gauge("charges.pending", {
  description:
    "Pay-later charges still to collect, by state (upcoming, retrying) and due (true: past their charge time)"
})
