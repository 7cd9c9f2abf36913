/**
 * A balance payment link of a booking that exists only in the booking system (a manifest row, no
 * service booking), paid after that booking was cancelled, is refunded automatically: once, with a
 * reference recorded before the call, alerted and visible (the operator's team email, the
 * `refunds list` CLI). Through the real server with the Bókun and Surfboard sandboxes over HTTP on
 * one database, the mirror refresh and the payment-link watch as their jobs run them.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, List, Logger, LogLevel } from "effect"
import { randomUUID } from "node:crypto"
import { Mirror } from "../../../src/mirror/Mirror.js"
import { BookingSystemAccounts } from "../../../src/operators/BookingSystemAccounts.js"
import { LinkStatusChecks } from "../../../src/partner/paymentLinks/LinkStatusChecks.js"
import { addDays, BokunSandbox, localDay } from "../../../src/sandbox/bokun/index.js"
import { SurfboardSandbox } from "../../../src/sandbox/surfboard/index.js"
import { cliWith, json } from "../../support/cli.js"
import { createKey, makeWorld } from "../../support/fixtures.js"
import { call } from "../../support/http.js"
import { merchantFor, paymentsEnv, returnedBySandbox, ServerSettings, vendorFor } from "../../support/payments.js"

const WatchLive = Layer.unwrapEffect(
  Effect.map(ServerSettings, ({ env }) =>
    LinkStatusChecks.Default.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
    ))
)

const env = WatchLive.pipe(Layer.provideMerge(paymentsEnv()))

const runWatch = Effect.flatMap(LinkStatusChecks, (w) => w.run())

const paymentLink = (id: string, key: string) =>
  call(`/api/v1/bookings/${id}/payment-link`, {
    method: "POST",
    key,
    body: {},
    headers: { "Idempotency-Key": randomUUID() }
  })

/** The mirror refresh of one booking-system account, as the job runs it. */
const refreshMirror = (accountId: string) =>
  Effect.flatMap(Mirror, (m) => m.refresh({ kind: "manual", daysAhead: 3, accountId })).pipe(
    Effect.provide(Mirror.Default.pipe(Layer.provide(BookingSystemAccounts.Default)))
  )

/**
 * Alpha with a merchant and a Bókun vendor; a booking of 2 adults tomorrow sold on another channel
 * (only in the booking system, nothing paid: 998 NOK due), mirrored; a link sent for its manifest
 * row. Links and refunds of earlier tests are pushed out of the watch's way.
 */
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE payment_links SET next_check_at = now() + interval '1 day' WHERE state IN ('open', 'closing')`
  yield* sql`UPDATE payment_link_refunds SET next_attempt_at = now() + interval '1 day' WHERE state IN ('requested', 'settling')`
  const w = yield* makeWorld
  const merchant = yield* merchantFor(w.alpha)
  const { vendor, accountId } = yield* vendorFor(w.alpha)
  const bokun = yield* BokunSandbox
  const made = yield* bokun.addBooking({
    vendorId: vendor.id,
    productId: vendor.products[0]!.id,
    date: addDays(localDay(Date.now(), "Europe/Oslo"), 1),
    participants: 2,
    paidMinor: 0,
    guest: { firstName: "Ola", lastName: "Nordmann", email: `ola-${w.tag}@example.com` }
  })
  expect((yield* refreshMirror(accountId)).failed).toBe(0)
  const [row] = yield* sql<{ id: string; status: string }>`
    SELECT id, status FROM manifest_rows WHERE account_id = ${accountId} AND reference = ${made.confirmationCode}`
  expect(row).toMatchObject({ status: "CONFIRMED" })
  const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["payment_links:write"] })
  const sent = yield* paymentLink(row!.id, key.token)
  expect(sent.status, sent.text).toBe(200)
  expect(sent.body).toMatchObject({ kind: "provider_balance", amount_minor: 99800, currency: "NOK" })
  const [link] = yield* sql<{ id: string; provider_link_id: string; idempotency_reference: string }>`
    SELECT id, provider_link_id, idempotency_reference FROM payment_links WHERE manifest_row_id = ${row!.id}`
  return {
    w,
    sql,
    bokun,
    merchant,
    vendor,
    accountId,
    made,
    row: row!.id,
    key,
    url: sent.body.url as string,
    link: link!
  }
}).pipe(Effect.orDie)

type Setup = Effect.Effect.Success<typeof setup>

/** Everything of the test due now, as if the watch's time had come. */
const makeDue = (s: Setup) =>
  Effect.all([
    s.sql`UPDATE payment_links SET next_check_at = now() - interval '1 second' WHERE id = ${s.link.id}`,
    s.sql`UPDATE payment_link_refunds SET next_attempt_at = now() - interval '1 second' WHERE link_id = ${s.link.id}`
  ]).pipe(Effect.orDie)

const linkRefunds = (s: Setup) =>
  s.sql<
    {
      seq: number
      method: string
      state: string
      amount_minor: number
      idempotency_reference: string
      attempts: number
    }
  >`
    SELECT seq, method, state, amount_minor::int AS amount_minor, idempotency_reference, attempts
    FROM payment_link_refunds WHERE link_id = ${s.link.id} ORDER BY seq`.pipe(Effect.orDie)

/** The money went back exactly once, in full: one void, or one completed refund order. */
const expectReturnedOnce = (orderId: string, amountMinor: number) =>
  Effect.map(returnedBySandbox(orderId), (r) => {
    const once = (r.voided === amountMinor && r.refundOrders === 0 && r.refunded === 0) ||
      (r.voided === 0 && r.refundOrders === 1 && r.refunded === amountMinor)
    expect(once, `order ${orderId}: ${JSON.stringify(r)}`).toBe(true)
  })

const teamEmails = (s: Setup) =>
  s.sql<{ dedupe_key: string; template: string; subject: string; to_addresses: Array<string> }>`
    SELECT dedupe_key, template, subject, to_addresses FROM email_outbox WHERE template = 'balance_refunded_team'
      AND booking_id = ${s.row}`.pipe(Effect.orDie)

/** Log lines at Error level with their `alert` annotation, as an alerting pipeline would pick them up. */
const captureAlerts = () => {
  const lines: Array<{ message: string; alert: unknown; link: unknown }> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    if (LogLevel.greaterThanEqual(logLevel, LogLevel.Error)) {
      const get = (key: string) => [...annotations].find(([k]) => k === key)?.[1]
      lines.push({
        message: String(List.isList(message) ? List.toArray(message).join(" ") : message),
        alert: get("alert"),
        link: get("payment_link_id")
      })
    }
  })
  return { lines, layer: Logger.add(logger) }
}

const payLink = (url: string) => Effect.flatMap(SurfboardSandbox, (surfboard) => surfboard.payLink(url))

const withSurfboardFaults = <A, E, R>(
  s: Setup,
  faults: { down?: boolean; loseAnswer?: "no" | "drop" },
  body: Effect.Effect<A, E, R>
) =>
  Effect.flatMap(SurfboardSandbox, (surfboard) =>
    Effect.acquireUseRelease(
      surfboard.faults.set(faults, { merchantId: s.merchant.id }),
      () => body,
      () => surfboard.faults.set({ down: false, loseAnswer: "no" }, { merchantId: s.merchant.id })
    ))

layer(env, { excludeTestServices: true, timeout: 300_000 })(
  "balance paid after a booking-system booking was cancelled",
  (it) => {
    describe("cancelled in the booking system, the mirror refreshed, then the link paid", () => {
      it.effect("the watch refunds it once, with the reference recorded first; alerted, the team emailed, in `refunds list`", () =>
        Effect.gen(function*() {
          const s = yield* setup
          yield* s.bokun.cancelBooking(s.vendor.id, s.made.confirmationCode)
          expect((yield* refreshMirror(s.accountId)).failed).toBe(0)
          const [row] = yield* s.sql<{ status: string }>`SELECT status FROM manifest_rows WHERE id = ${s.row}`
          expect(row!.status).toBe("CANCELLED")
          // Paid before the watch could close the link at the provider.
          yield* payLink(s.url)

          yield* makeDue(s)
          const alerts = captureAlerts()
          const seen = yield* runWatch.pipe(Effect.provide(alerts.layer))
          expect(seen).toMatchObject({
            checked: 1,
            paid: 1,
            refunded: 1,
            link_refunds: { found: 1, completed: 1, failed: 0 }
          })
          expect(alerts.lines.filter((l) => l.link === s.link.id)).toMatchObject([
            { alert: "payment_link_paid_after_cancel", message: expect.stringContaining("refunded automatically") }
          ])
          // The sandbox's own record: the payment went back once, in full.
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)
          expect(yield* linkRefunds(s)).toMatchObject([
            {
              seq: 1,
              state: "completed",
              amount_minor: 99800,
              idempotency_reference: `${s.link.idempotency_reference}:refund:1`,
              attempts: 1
            }
          ])
          const [link] = yield* s.sql<
            { state: string; closed_reason: string }
          >`SELECT state, closed_reason FROM payment_links WHERE id = ${s.link.id}`
          expect(link).toEqual({ state: "closed", closed_reason: "paid" })
          // Visible: the operator's team is told (once), and support sees it with the CLI.
          const mails = yield* teamEmails(s)
          expect(mails).toHaveLength(1)
          expect(mails[0]!.dedupe_key).toBe(`payment_link:${s.link.id}:refunded:team`)
          expect(mails[0]!.subject).toContain(s.made.confirmationCode)
          expect(mails[0]!.to_addresses.length).toBeGreaterThan(0)
          const settings = yield* ServerSettings
          const listed = json(
            yield* Effect.promise(() =>
              cliWith(settings.databaseUrl, settings.env, "refunds", "list", "--state", "all")
            )
          )
          expect(listed.filter((r: any) => r.link_id === s.link.id)).toMatchObject([
            {
              source: "payment_link",
              manifest_row_id: s.row,
              reference: s.made.confirmationCode,
              state: "completed",
              amount_minor: 99800,
              provider_order_id: s.link.provider_link_id
            }
          ])

          // Never twice: the watch again.
          yield* makeDue(s)
          expect(yield* runWatch).toMatchObject({ paid: 0, link_refunds: { found: 0 } })
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)
          expect(yield* linkRefunds(s)).toHaveLength(1)
          expect(yield* teamEmails(s)).toHaveLength(1)
        }))

      it.effect("the refund's answer is lost: the next run asks again with the same reference; returned once", () =>
        Effect.gen(function*() {
          const s = yield* setup
          yield* s.bokun.cancelBooking(s.vendor.id, s.made.confirmationCode)
          yield* refreshMirror(s.accountId)
          yield* payLink(s.url)
          yield* makeDue(s)
          // The watch reads the link paid (a read is never lost) and sends the refund, whose answer is lost.
          const seen = yield* withSurfboardFaults(s, { loseAnswer: "drop" }, runWatch)
          expect(seen).toMatchObject({ paid: 1, refunded: 1, link_refunds: { found: 1, completed: 0, open: 1 } })
          expect((yield* linkRefunds(s)).map((r) => [r.state, r.attempts])).toEqual([["requested", 1]])
          // The sandbox did return it (its answer never reached us).
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)

          yield* makeDue(s)
          expect((yield* runWatch).link_refunds).toMatchObject({ found: 1, completed: 1 })
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)
          expect(yield* linkRefunds(s)).toMatchObject([
            {
              seq: 1,
              state: "completed",
              attempts: 2,
              idempotency_reference: `${s.link.idempotency_reference}:refund:1`
            }
          ])
        }))

      it.effect("the provider takes its time to settle the return: followed up on later runs until it completes, once", () =>
        Effect.gen(function*() {
          const s = yield* setup
          const surfboard = yield* SurfboardSandbox
          yield* s.bokun.cancelBooking(s.vendor.id, s.made.confirmationCode)
          yield* refreshMirror(s.accountId)
          yield* payLink(s.url)
          yield* makeDue(s)
          yield* surfboard.faults.set({ settlement: "manual" }, { merchantId: s.merchant.id })
          expect((yield* runWatch).link_refunds).toMatchObject({ found: 1, completed: 0, open: 1 })
          expect((yield* linkRefunds(s)).map((r) => r.state)).toEqual(["settling"])
          yield* makeDue(s)
          expect((yield* runWatch).link_refunds).toMatchObject({ found: 1, completed: 0, open: 1 })
          yield* surfboard.settle({ orderId: s.link.provider_link_id })
          yield* surfboard.faults.set({ settlement: "instant" }, { merchantId: s.merchant.id })
          yield* makeDue(s)
          expect((yield* runWatch).link_refunds).toMatchObject({ found: 1, completed: 1 })
          expect(yield* linkRefunds(s)).toMatchObject([{ seq: 1, state: "completed" }])
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)
        }))
    })

    describe("cancelled in the booking system, the mirror not refreshed yet", () => {
      it.effect("the watch asks the booking system, which says cancelled: refunded once", () =>
        Effect.gen(function*() {
          const s = yield* setup
          yield* s.bokun.cancelBooking(s.vendor.id, s.made.confirmationCode)
          const [row] = yield* s.sql<{ status: string }>`SELECT status FROM manifest_rows WHERE id = ${s.row}`
          expect(row!.status).toBe("CONFIRMED")
          yield* payLink(s.url)
          yield* makeDue(s)
          expect(yield* runWatch).toMatchObject({ paid: 1, refunded: 1, link_refunds: { completed: 1 } })
          yield* expectReturnedOnce(s.link.provider_link_id, 99800)
          expect(yield* teamEmails(s)).toHaveLength(1)
        }))

      it.effect("a live booking's balance paid: recorded as paid, nothing returned; the booking system down: asked again later", () =>
        Effect.gen(function*() {
          const s = yield* setup
          yield* payLink(s.url)
          yield* makeDue(s)
          yield* Effect.acquireUseRelease(
            s.bokun.faults.set({ down: true }, { vendorId: s.vendor.id }),
            () => Effect.map(runWatch, (seen) => expect(seen).toMatchObject({ checked: 1, paid: 0, unanswered: 1 })),
            () => s.bokun.faults.set({ down: false }, { vendorId: s.vendor.id })
          )
          const [open] = yield* s.sql<
            { state: string; last_error: string }
          >`SELECT state, last_error FROM payment_links WHERE id = ${s.link.id}`
          expect(open).toMatchObject({ state: "open", last_error: expect.stringContaining("booking system") })
          yield* makeDue(s)
          expect(yield* runWatch).toMatchObject({ paid: 1, refunded: 0, link_refunds: { found: 0 } })
          expect(yield* returnedBySandbox(s.link.provider_link_id)).toEqual({ refundOrders: 0, refunded: 0, voided: 0 })
          expect(yield* linkRefunds(s)).toEqual([])
        }))
    })
  }
)
