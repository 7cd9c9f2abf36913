/**
 * The assistant's booking write tools through the tool harness with the Bókun and Surfboard
 * sandboxes over HTTP: `cancel_booking`, `reschedule_booking` (and `get_reschedule_options`) and
 * `send_balance_payment_link`. Each first call changes nothing at the sandboxes or in the service and
 * summarises who, which booking, what happens and what money moves; each second call runs the REST
 * write once (the REST result, the audit's channel mcp); a booking changed in between is refused.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { randomUUID } from "node:crypto"
import { addDays, BokunSandbox } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { callTool, problemOf, resultOf, withAssistantTools } from "../../support/assistantTools.js"
import { createKey, insertBooking, makeWorld } from "../../support/fixtures.js"
import { call, get } from "../../support/http.js"
import { usedToday } from "../../support/manifest.js"
import { linkedBooking, merchantFor, paidAtSandbox, paymentsEnv, vendorFor } from "../../support/payments.js"

const WRITES = ["bookings:read", "bookings.cancel:write", "bookings.reschedule:write", "payment_links:write"]

/** Alpha with a Surfboard merchant and a Bókun vendor; Kari's booking (998 NOK, 2 guests, day+5 10:00), paid. */
const setup = Effect.gen(function*() {
  const w = yield* makeWorld
  const merchant = yield* merchantFor(w.alpha)
  const { vendor } = yield* vendorFor(w.alpha)
  const booked = yield* linkedBooking(w.alpha, vendor, {
    guestName: "Kari Nordmann",
    guestEmail: `kari-${w.tag}@example.com`
  })
  yield* paidAtSandbox(booked, merchant.id, 99800)
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: WRITES })
  return { w, merchant, vendor, key, ...booked }
})

const auditRows = (keyId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<
        { action: string; outcome: string; channel: string; client_name: string | null; person_email: string | null }
      >`
      SELECT action, outcome, channel, client_name, person_email FROM write_audit WHERE key_id = ${keyId} ORDER BY id`
        .pipe(Effect.orDie)
  )

/** Everything a write leaves behind, counted: a first call must leave every count as it was. */
const sideEffects = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<Record<string, number>>`
    SELECT
      (SELECT count(*)::int FROM email_outbox) AS emails,
      (SELECT count(*)::int FROM booking_changes) AS changes,
      (SELECT count(*)::int FROM booking_refunds) AS refunds,
      (SELECT count(*)::int FROM payment_links) AS links,
      (SELECT count(*)::int FROM surfboard_sandbox.orders) AS provider_orders,
      (SELECT count(*)::int FROM idempotency_records) AS idempotency,
      (SELECT count(*)::int FROM write_audit) AS audit,
      (SELECT coalesce(sum(used), 0)::int FROM daily_write_counters) AS counted,
      (SELECT md5(string_agg(b::text, ',' ORDER BY b.id)) FROM bookings b) AS bookings`.pipe(
    Effect.map((rows) => rows[0]!),
    Effect.orDie
  ))

const bookingRow = (id: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ status: string; experience_date: string; start_time: string | null }>`
      SELECT status, experience_date::text AS experience_date, start_time FROM bookings WHERE id = ${id}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )
  )

layer(withAssistantTools(paymentsEnv()), { excludeTestServices: true, timeout: 180_000 })(
  "booking write tools",
  (it) => {
    it.effect("cancel_booking: the summary says who, which booking, the refund; the second call cancels once", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const args = { id: s.bookingId, reason: "Guest asked by phone" }
        const first = resultOf(yield* callTool("cancel_booking", args, { key: s.key.token }))
        expect(first.requires_confirmation).toBe(true)
        expect(first.summary).toContain(`Cancel booking ${s.code} (Kari Nordmann): Harbour Cruise, ${s.day} at 10:00`)
        expect(first.summary).toContain("2 guests")
        expect(first.summary).toContain("The guest gets NOK 998.00 back in full")
        expect(first.summary).toContain("Guest asked by phone")
        expect(first.summary).toContain("cannot be undone")
        expect((yield* bookingRow(s.bookingId)).status).toBe("CONFIRMED")
        expect(yield* usedToday(s.key.id, "cancels")).toBe(0)
        expect(yield* auditRows(s.key.id)).toEqual([])

        const done = resultOf(
          yield* callTool("cancel_booking", { ...args, confirm_token: first.confirm_token }, {
            key: s.key.token
          })
        )
        expect(done).toMatchObject({
          id: s.bookingId,
          already_cancelled: false,
          refund: { amount_minor: 99800, currency: "NOK" }
        })
        expect(["CANCELLED", "REFUNDED"]).toContain(done.status)
        expect((yield* bookingRow(s.bookingId)).status).not.toBe("CONFIRMED")
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)
        expect(yield* auditRows(s.key.id)).toEqual([{
          action: "cancels",
          outcome: "done",
          channel: "mcp",
          client_name: "Test Assistant",
          person_email: "person@example.com"
        }])

        // Now cancelled: a first call says nothing will change and no money moves.
        const again = resultOf(yield* callTool("cancel_booking", args, { key: s.key.token }))
        expect(again.summary).toContain("already cancelled: nothing will change and no money moves")
      }))

    it.effect("cancel_booking: cancelled over REST after the summary: the token is refused, nothing more happens", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const args = { id: s.bookingId, reason: "Weather" }
        const token = resultOf(yield* callTool("cancel_booking", args, { key: s.key.token })).confirm_token
        const rest = yield* call(`/api/v1/bookings/${s.bookingId}/cancel`, {
          method: "POST",
          key: s.key.token,
          body: { reason: "Cancelled by the desk" },
          headers: { "Idempotency-Key": randomUUID() }
        })
        expect(rest.status, rest.text).toBe(200)
        const refused = problemOf(
          yield* callTool("cancel_booking", { ...args, confirm_token: token }, { key: s.key.token })
        )
        expect(refused).toMatchObject({
          status: 400,
          invalid_params: [{ name: "confirm_token", reason: expect.any(String) }]
        })
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)
        expect((yield* auditRows(s.key.id)).map((a) => [a.channel, a.outcome])).toEqual([["api", "done"]])
      }))

    it.effect("reschedule options and reschedule_booking: the REST options; the move summarised, then made once", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const target = addDays(s.day, 1)
        const options = resultOf(
          yield* callTool("get_reschedule_options", { id: s.bookingId, date: target }, {
            key: s.key.token
          })
        )
        const rest = yield* get(`/api/v1/bookings/${s.bookingId}/reschedule-options?date=${target}`, s.key.token)
        expect(options).toEqual(rest.body)
        expect(options.available).toBe(true)
        const option = options.options.find((o: any) => o.start_time === "14:30") ?? options.options[0]
        const args = {
          id: s.bookingId,
          date: target,
          start_time_id: option.start_time_id,
          ...(option.rate_id ? { rate_id: option.rate_id } : {})
        }
        const before = yield* sideEffects
        const first = resultOf(yield* callTool("reschedule_booking", args, { key: s.key.token }))
        expect(yield* sideEffects).toEqual(before)
        expect(first.summary).toContain(`Move booking ${s.code} (Kari Nordmann): Harbour Cruise, ${s.day} at 10:00`)
        expect(first.summary).toContain(`to ${target} at ${option.start_time} (Europe/Oslo)`)
        expect(first.summary).toContain("no money moves")
        expect(yield* bookingRow(s.bookingId)).toMatchObject({ experience_date: s.day, start_time: "10:00" })
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(0)

        const moved = resultOf(
          yield* callTool("reschedule_booking", { ...args, confirm_token: first.confirm_token }, {
            key: s.key.token
          })
        )
        expect(moved).toEqual({
          id: s.bookingId,
          status: "CONFIRMED",
          date: target,
          start_time: option.start_time,
          previous_date: s.day,
          previous_start_time: "10:00",
          already_on_date: false
        })
        expect(yield* bookingRow(s.bookingId)).toMatchObject({ experience_date: target, start_time: option.start_time })
        expect(yield* usedToday(s.key.id, "reschedules")).toBe(1)
        // Moved: the same arguments now say it is already there.
        const noop = resultOf(yield* callTool("reschedule_booking", args, { key: s.key.token }))
        expect(noop.summary).toContain("already on that departure: nothing will change")
      }))

    it.effect("send_balance_payment_link: who is sent what; the link made and emailed once on the second call", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const surfboard = yield* SurfboardSandbox
        const booking = yield* insertBooking({
          operatorId: s.w.alpha,
          guestName: "Per Hansen",
          payLater: {
            status: "upcoming",
            amountMinor: 45000,
            currency: "NOK",
            chargeAt: new Date(Date.now() + 10 * 86_400_000),
            paidAt: null
          }
        })
        const before = yield* sideEffects
        const first = resultOf(yield* callTool("send_balance_payment_link", { id: booking }, { key: s.key.token }))
        expect(yield* sideEffects).toEqual(before)
        expect(first.summary).toContain("Email Per Hansen a link to pay NOK 450.00, the pay-later balance of booking")
        expect(first.summary).toContain("No money moves until the guest pays")
        expect(yield* usedToday(s.key.id, "payment_links")).toBe(0)
        const sql = yield* SqlClient.SqlClient
        const linksBefore = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payment_links`
        const sent = resultOf(
          yield* callTool("send_balance_payment_link", { id: booking, confirm_token: first.confirm_token }, {
            key: s.key.token
          })
        )
        expect(sent).toMatchObject({
          id: booking,
          kind: "deferred_balance",
          url: expect.stringContaining(surfboard.baseUrl),
          amount_minor: 45000,
          currency: "NOK"
        })
        expect((yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM payment_links`)[0]!.n).toBe(
          linksBefore[0]!.n + 1
        )
        expect(yield* usedToday(s.key.id, "payment_links")).toBe(1)
        // Nothing owed on a pay-now booking: the first call already refuses (422), as the REST write would.
        expect(problemOf(yield* callTool("send_balance_payment_link", { id: s.bookingId }, { key: s.key.token })))
          .toMatchObject({ status: 422 })
        // Another operator's booking: not found, or not yours.
        const theirs = yield* insertBooking({ operatorId: s.w.beta })
        expect(problemOf(yield* callTool("send_balance_payment_link", { id: theirs }, { key: s.key.token })))
          .toMatchObject({ status: 404, type: "/api/v1/docs/errors.md#not-found" })
      }))

    it.effect("another operator's booking is not found, or not yours, on the first call; a missing write scope is refused", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const theirs = yield* insertBooking({ operatorId: s.w.beta, guestName: "Beta Guest" })
        const before = yield* sideEffects
        const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
          ["cancel_booking", { id: theirs, reason: "Not mine" }],
          ["reschedule_booking", { id: theirs, date: addDays(s.day, 1) }],
          ["get_reschedule_options", { id: theirs, date: addDays(s.day, 1) }]
        ]
        for (const [tool, args] of calls) {
          const problem = problemOf(yield* callTool(tool, args, { key: s.key.token }))
          expect(problem, tool).toMatchObject({ status: 404, type: "/api/v1/docs/errors.md#not-found" })
          expect(problem.detail, tool).toContain("not yours")
        }
        expect(yield* sideEffects).toEqual(before)
        const readOnly = yield* createKey({ by: s.w.alice, operators: [s.w.alpha], scopes: ["bookings:read"] })
        expect(yield* callTool("cancel_booking", { id: s.bookingId, reason: "No scope" }, { key: readOnly.token }))
          .toEqual({ kind: "insufficient_scope", scope: "bookings.cancel:write" })
        expect(yield* callTool("reschedule_booking", { id: s.bookingId, date: s.day }, { key: readOnly.token }))
          .toEqual({ kind: "insufficient_scope", scope: "bookings.reschedule:write" })
        expect(yield* callTool("send_balance_payment_link", { id: s.bookingId }, { key: readOnly.token }))
          .toEqual({ kind: "insufficient_scope", scope: "payment_links:write" })
        // The cancel's reason follows the REST rule (3 to 500 characters), named.
        expect(problemOf(yield* callTool("cancel_booking", { id: s.bookingId, reason: " x " }, { key: s.key.token })))
          .toMatchObject({ status: 400, invalid_params: [{ name: "reason", reason: expect.any(String) }] })
      }))

    it.effect("send_balance_payment_link: the amount owed changed after the summary: refused, nothing made or sent", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const sql = yield* SqlClient.SqlClient
        const booking = yield* insertBooking({
          operatorId: s.w.alpha,
          payLater: {
            status: "upcoming",
            amountMinor: 45000,
            currency: "NOK",
            chargeAt: new Date(Date.now() + 10 * 86_400_000),
            paidAt: null
          }
        })
        const first = resultOf(yield* callTool("send_balance_payment_link", { id: booking }, { key: s.key.token }))
        expect(first.summary).toContain("NOK 450.00")
        yield* sql`UPDATE bookings SET pay_later_amount_minor = 30000 WHERE id = ${booking}`
        const before = yield* sideEffects
        const refused = problemOf(
          yield* callTool("send_balance_payment_link", { id: booking, confirm_token: first.confirm_token }, {
            key: s.key.token
          })
        )
        expect(refused).toMatchObject({
          status: 400,
          invalid_params: [{ name: "confirm_token", reason: expect.any(String) }]
        })
        expect(yield* sideEffects).toEqual(before)
        // Asked again, the new summary shows the new amount, and its token works.
        const again = resultOf(yield* callTool("send_balance_payment_link", { id: booking }, { key: s.key.token }))
        expect(again.summary).toContain("NOK 300.00")
        expect(resultOf(
          yield* callTool("send_balance_payment_link", { id: booking, confirm_token: again.confirm_token }, {
            key: s.key.token
          })
        )).toMatchObject({ amount_minor: 30000, kind: "deferred_balance" })
      }))

    it.effect("cancel_booking: concurrent second calls make one cancel, one audit row, one count; all answer its result", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const sql = yield* SqlClient.SqlClient
        const args = { id: s.bookingId, reason: "Storm warning" }
        const token = resultOf(yield* callTool("cancel_booking", args, { key: s.key.token })).confirm_token
        const replies = yield* Effect.all(
          Array.from(
            { length: 3 },
            () => callTool("cancel_booking", { ...args, confirm_token: token }, { key: s.key.token })
          ),
          { concurrency: "unbounded" }
        )
        const results = replies.map(resultOf)
        expect(results[0]).toMatchObject({ id: s.bookingId, already_cancelled: false, refund: { amount_minor: 99800 } })
        for (const result of results) expect(result).toEqual(results[0])
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)
        expect((yield* auditRows(s.key.id)).map((a) => [a.action, a.outcome])).toEqual([["cancels", "done"]])
        const [changes] = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM booking_changes WHERE booking_id = ${s.bookingId} AND kind = 'cancel'`
        expect(changes!.n).toBe(1)
      }))

    it.effect("cancel_booking: a second call made while the first is cancelling (the booking's change open) waits and answers its result", () =>
      Effect.gen(function*() {
        const s = yield* setup
        const sql = yield* SqlClient.SqlClient
        const bokun = yield* BokunSandbox
        const args = { id: s.bookingId, reason: "Storm warning" }
        const token = resultOf(yield* callTool("cancel_booking", args, { key: s.key.token })).confirm_token
        // The booking system answers slowly: the first call holds the booking's change open for a while.
        yield* bokun.faults.set({ latencyMs: 1500 }, { vendorId: s.vendor.id })
        const first = yield* Effect.fork(
          callTool("cancel_booking", { ...args, confirm_token: token }, { key: s.key.token })
        )
        // Until the cancel's change is open (the preview of another call would now answer 409).
        yield* Effect.repeat(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM booking_changes WHERE booking_id = ${s.bookingId}`,
          { until: (rows) => rows[0]!.n > 0 }
        ).pipe(Effect.orDie)
        const second = yield* callTool("cancel_booking", { ...args, confirm_token: token }, { key: s.key.token }).pipe(
          Effect.ensuring(bokun.faults.set({ latencyMs: 0 }, { vendorId: s.vendor.id }))
        )
        const firstReply = yield* Fiber.join(first)
        expect(resultOf(second)).toEqual(resultOf(firstReply))
        expect(resultOf(second)).toMatchObject({ already_cancelled: false, refund: { amount_minor: 99800 } })
        expect(yield* usedToday(s.key.id, "cancels")).toBe(1)
        expect((yield* auditRows(s.key.id)).map((a) => a.outcome)).toEqual(["done"])
      }))
  }
)
