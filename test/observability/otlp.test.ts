/**
 * Traces, metrics and logs as an SRE receives them: the real server exports over OTLP/HTTP to a
 * receiver in this test (test/support/otlpReceiver.ts), with LOG_FORMAT=json on the console.
 * Requests carry the test's secrets (a partner key in the header and in the query string, a guest's
 * email and phone in the booking, the payment provider's API secret in the server's settings), and
 * everything received and logged is scanned for them. The spans: named by route, `server.address`
 * a host, parent-based sampling, a handled booking-system 404 not an error, the outbox send linked
 * to the request that enqueued it. The metrics: each one present with bounded labels.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, vi } from "vitest"
import { outboxTick } from "../../src/jobs/outboxSender.js"
import { recordedRun } from "../../src/jobs/runs.js"
import { BookingSystem } from "../../src/ports/BookingSystem.js"
import { BokunSandbox } from "../../src/sandbox/bokun/index.js"
import { createKey, makeWorld } from "../support/fixtures.js"
import { call } from "../support/http.js"
import { attr, type OtlpSpan, startOtlpReceiver } from "../support/otlpReceiver.js"
import {
  linkedBooking,
  merchantFor,
  paidAtSandbox,
  paymentsEnv,
  ServerSettings,
  vendorFor
} from "../support/payments.js"

const receiver = await startOtlpReceiver()
afterAll(() => receiver.close())

/** Everything the service writes to the console during this file (the json log lines among it). */
const consoleLines: Array<string> = []
for (const method of ["log", "error", "warn", "info"] as const) {
  const original = console[method].bind(console)
  vi.spyOn(console, method).mockImplementation((...args: Array<unknown>) => {
    consoleLines.push(args.map(String).join(" "))
    original(...(args as []))
  })
}

const env = paymentsEnv(Effect.succeed({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_METRIC_EXPORT_INTERVAL: "300",
  OTEL_BSP_SCHEDULE_DELAY: "200",
  LOG_FORMAT: "json",
  LOG_LEVEL: "Info",
  RATE_LIMIT_PER_MINUTE: "4"
}))

/** Polls until `check` passes (the exporters send every few hundred ms), at most 20 s. */
const eventually = (check: () => void) =>
  Effect.promise(async () => {
    const deadline = Date.now() + 20_000
    for (;;) {
      try {
        return check()
      } catch (e) {
        if (Date.now() > deadline) throw e
        await new Promise((r) => setTimeout(r, 100))
      }
    }
  })

const TRACE_SAMPLED = randomUUID().replaceAll("-", "")
const TRACE_NOT_SAMPLED = randomUUID().replaceAll("-", "")

layer(env, { excludeTestServices: true, timeout: 180_000 })("observability over OTLP", (it) => {
  describe("one scenario, then what was exported", () => {
    it.effect("names, links, statuses, sampling, metrics; no secret anywhere", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const { accountId, vendor } = yield* vendorFor(w.alpha)
        const guestEmail = `kari-${w.tag}@example.org`
        const guestPhone = "+47 912 34 567"
        const merchant = yield* merchantFor(w.alpha)
        const booking = yield* linkedBooking(w.alpha, vendor, {
          guestName: "Kari Nordmann",
          guestEmail,
          guestPhone,
          amountMinor: 99800
        })
        const { bookingId } = booking
        yield* paidAtSandbox(booking, merchant.id, 99800, { at: new Date(Date.now() - 2 * 86_400_000) })
        const key = yield* createKey({
          by: w.alice,
          operators: [w.alpha],
          scopes: ["bookings:read", "guests.contact:read", "bookings.cancel:write"],
          name: "Observed"
        })
        const other = yield* createKey({ by: w.alice, operators: [w.alpha], name: "Limited" })

        // A read by id, in a trace the caller samples; one in a trace the caller does not sample.
        const read = yield* call(`/api/v1/bookings/${bookingId}`, {
          key: key.token,
          headers: { traceparent: `00-${TRACE_SAMPLED}-${"1".repeat(16)}-01` }
        })
        expect(read.status, read.text).toBe(200)
        expect(read.text).toContain(guestEmail)
        const unsampled = yield* call(`/api/v1/bookings/${bookingId}`, {
          key: key.token,
          headers: { traceparent: `00-${TRACE_NOT_SAMPLED}-${"2".repeat(16)}-00` }
        })
        expect(unsampled.status).toBe(200)
        // The secret key in the query string (refused), and a cancel whose emails go through the outbox.
        const inQuery = yield* call(`/api/v1/bookings?limit=1&key=${key.token}`)
        expect(inQuery.status).toBeGreaterThanOrEqual(400)
        const cancelled = yield* call(`/api/v1/bookings/${bookingId}/cancel`, {
          method: "POST",
          key: key.token,
          headers: { "Idempotency-Key": randomUUID() },
          body: { reason: `Guest wrote from ${guestEmail}` }
        })
        expect(cancelled.status, cancelled.text).toBe(200)
        // Five reads with a key allowed four a minute: one refusal.
        for (let i = 0; i < 5; i++) yield* call("/api/v1/bookings?limit=1", { key: other.token })
        // The outbox job sends the emails; a job run; a booking-system 404 the caller handles.
        yield* outboxTick
        yield* recordedRun("observability-test", () => Effect.succeed({ ok: 1 }))
        const bookingSystem = yield* BookingSystem
        const { env: settings } = yield* ServerSettings
        const missing = yield* bookingSystem.balance({
          id: accountId,
          kind: "bokun",
          name: vendor.title,
          baseUrl: (yield* BokunSandbox).baseUrl,
          accessKey: Redacted.make(vendor.accessKey),
          secretKey: Redacted.make(vendor.secretKey)
        }, "NO-SUCH-BOOKING").pipe(Effect.flip)
        expect(missing._tag).toBe("BookingSystemRejected")

        // --- spans ---
        yield* eventually(() => {
          const names = receiver.spans().map((s) => s.name)
          expect(names).toContain("GET /api/v1/bookings/{id}")
          expect(names).toContain("POST /api/v1/bookings/{id}/cancel")
          expect(names).toContain("OutboxSender.deliver")
          expect(names).toContain("BookingSystem.balance")
        })
        const spans = receiver.spans()
        expect(spans.filter((s) => s.kind === 2 && s.name.startsWith("http.server"))).toEqual([])
        // Parent-based: the caller's sampled trace is continued, the unsampled one never exported.
        expect(spans.some((s) => s.traceId === TRACE_SAMPLED && s.name === "GET /api/v1/bookings/{id}")).toBe(true)
        expect(spans.filter((s) => s.traceId === TRACE_NOT_SAMPLED)).toEqual([])
        // server.address is a host.
        const addresses = spans.map((s) => attr(s, "server.address")).filter((a) => a !== undefined)
        expect(addresses.length).toBeGreaterThan(0)
        for (const address of addresses) expect(String(address)).not.toContain("://")
        // The handled 404: no span of that call is an error.
        const balance = spans.filter((s) => s.name === "BookingSystem.balance" || s.name === "Bokun.booking")
        expect(balance.length).toBeGreaterThan(0)
        for (const span of balance) expect(span.status.code, span.name).not.toBe(2)
        // The send links to the cancel's trace.
        const cancelSpan = spans.find((s) => s.name === "POST /api/v1/bookings/{id}/cancel")!
        const deliveries = spans.filter((s) => s.name === "OutboxSender.deliver")
        expect(deliveries.some((d: OtlpSpan) => d.links?.some((l) => l.traceId === cancelSpan.traceId))).toBe(true)
        expect(deliveries.every((d) => d.traceId !== cancelSpan.traceId)).toBe(true)

        // --- metrics ---
        yield* eventually(() => {
          const metrics = receiver.metrics()
          for (
            const name of [
              "http.server.request.duration",
              "db.client.connection.count",
              "db.client.connection.max",
              "db.client.connection.pending_requests",
              "outbox.backlog",
              "outbox.oldest_age",
              "refunds.pending",
              "charges.pending",
              "job.runs",
              "job.duration",
              "rate_limit.refusals"
            ]
          ) expect(metrics.has(name), name).toBe(true)
          const routes = metrics.get("http.server.request.duration")!.dataPoints.map((p) => attr(p, "http.route"))
          expect(routes).toContain("/api/v1/bookings/{id}")
          expect(routes).toContain("/api/v1/bookings/{id}/cancel")
          // Cumulative counters: the export that first carried a metric may predate the last run.
          const runs = metrics.get("job.runs")!.dataPoints
          expect(runs.some((p) => attr(p, "job") === "observability-test" && attr(p, "outcome") === "ok")).toBe(true)
          expect(runs.some((p) => attr(p, "job") === "outbox-sender" && attr(p, "outcome") === "ok")).toBe(true)
          const refusals = metrics.get("rate_limit.refusals")!.dataPoints
          expect(refusals.map((p) => attr(p, "bucket"))).toContain("partner")
        })
        const metrics = receiver.metrics()
        const duration = metrics.get("http.server.request.duration")!.dataPoints
        const byId = duration.find((p) => attr(p, "http.route") === "/api/v1/bookings/{id}")!
        expect(attr(byId, "http.request.method")).toBe("GET")
        expect(attr(byId, "http.response.status_code")).toBe("200")
        expect(attr(byId, "api")).toBe("partner")
        expect(metrics.get("db.client.connection.count")!.dataPoints.map((p) => attr(p, "state")).sort()).toEqual(
          expect.arrayContaining(["idle", "used"])
        )
        // No label carries an id or a raw path.
        const labels = [...metrics.values()].flatMap((m) => m.dataPoints.flatMap((p) => p.attributes))
        for (const label of labels) {
          const value = String(Object.values(label.value)[0])
          expect(value).not.toContain(bookingId)
          expect(value).not.toContain(key.id)
        }

        // --- logs: json lines with the request's ids ---
        const requestLines = consoleLines.filter((l) => l.startsWith("{") && l.includes("\"message\":\"request\""))
        expect(requestLines.length).toBeGreaterThan(5)
        for (const line of requestLines) {
          const event = JSON.parse(line)
          expect(event.request_id).toMatch(/^[0-9a-f-]{36}$/)
        }
        const sampledLine = requestLines.map((l) => JSON.parse(l)).find((e) => e.trace_id === TRACE_SAMPLED)
        expect(sampledLine?.span_id).toMatch(/^[0-9a-f]{16}$/)

        // --- no secret anywhere: exported batches, console ---
        const everything = receiver.raw() + "\n" + consoleLines.join("\n")
        const secrets = {
          "partner key": key.token,
          "other key": other.token,
          "key secret part": key.token.split("_").at(-1)!,
          "guest email": guestEmail,
          "guest phone": guestPhone,
          "provider secret": settings.SURFBOARD_API_SECRET!,
          "vendor secret key": vendor.secretKey
        }
        for (const [what, secret] of Object.entries(secrets)) {
          expect(everything.includes(secret), `${what} found in the exported or logged output`).toBe(false)
        }
        expect(everything).toContain("[redacted]")
      }))
  })
})
