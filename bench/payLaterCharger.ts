/**
 * `npm run bench:pay-later`: the `pay-later-charger` job's work (src/payLater/PayLaterCharger.ts)
 * through 10,000 due pay-later charges against the Surfboard sandbox over HTTP, with two charger
 * instances running at the same time, counting double charges at the provider (must be 0) and
 * recording the rate (charges per second).
 *
 * 1. PostgreSQL: DATABASE_URL, or the embedded server under bench/.data (BENCH_PG_PORT, as `npm run bench`);
 *    database partner_bench_pay_later, dropped, created and migrated.
 * 2. The Surfboard sandbox in this process (its own schema), one merchant recorded as the operator's
 *    payment account; BENCH_PAY_LATER_CHARGES (10000) pay-later bookings due a minute ago, each
 *    with its own saved card (tokens written in SQL, as the tokenised first payment leaves them).
 *    BENCH_PAY_LATER_SOFT (0.1): that share of the cards declines softly on its first attempt (the
 *    charge is retried: the bench then runs again at the retry's time).
 * 3. Two instances (two PayLaterCharger services, each with its own pool), each running
 *    `run({batch: BENCH_PAY_LATER_BATCH (500)})` until nothing is due, at the same time; then the
 *    retries. Timed end to end. Checked: every charge collected, one paid order per card, one
 *    booking payment per booking.
 * The figures are in bench/README.md ("Issue 15: the pay-later charger").
 */
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { ExternalSystemsLive, OutboxLive } from "../src/adapters/live.js"
import { layerFromUrl } from "../src/db/Database.js"
import { createDatabase } from "../src/db/embedded.js"
import { PayLaterCharger } from "../src/payLater/PayLaterCharger.js"
import { startSandbox } from "../src/sandbox/surfboard/index.js"
import { step } from "./children.js"
import { benchServer } from "./server.js"
import { readSettings } from "./settings.js"

const CHARGES = Math.max(1, Number(process.env.BENCH_PAY_LATER_CHARGES ?? 10_000))
const BATCH = Math.max(1, Number(process.env.BENCH_PAY_LATER_BATCH ?? 500))
const SOFT = Math.min(1, Math.max(0, Number(process.env.BENCH_PAY_LATER_SOFT ?? 0.1)))
const CONCURRENCY = process.env.BENCH_PAY_LATER_CONCURRENCY ?? "8"

const prepare = (sandbox: Effect.Effect.Success<ReturnType<typeof startSandbox>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* sandbox.createMerchant({ name: "Bench Fjord AS" })
    const [op] = yield* sql<{ id: string }>`INSERT INTO operators (name) VALUES ('Bench Fjord AS') RETURNING id`
    yield* sql`
      INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret, sandbox)
      VALUES (${op!.id}, ${merchant.id}, ${merchant.paymentPageTerminalId}, ${sandbox.baseUrl}, ${merchant.apiKey},
        ${merchant.apiSecret}, true)`
    yield* sql.unsafe(`
      INSERT INTO bookings (confirmation_code, status, operator_id, tour_name, experience_date, start_time, timezone,
        participants, amount_minor, currency, channel, guest_name, guest_email, payment_strategy, pay_later_status,
        pay_later_amount_minor, pay_later_currency, pay_later_charge_at, booked_at, created_at)
      SELECT 'BENCH-' || lpad(g::text, 6, '0'), 'CONFIRMED', '${op!.id}', 'Bench Cruise', current_date + 30, '10:00',
        'Europe/Oslo', 2, 50000 + g, 'NOK', 'website', 'Bench Guest', 'bench' || g || '@example.com', 'pay_later',
        'upcoming', 40000 + g, 'NOK', now() - interval '1 minute', now() - interval '10 days', now() - interval '10 days'
      FROM generate_series(1, ${CHARGES}) g`)
    yield* sql.unsafe(`
      INSERT INTO surfboard_sandbox.card_tokens (id, merchant_id, order_id, created_at)
      SELECT 'benchtok' || g, '${merchant.id}', 'bench-first-payment', now() FROM generate_series(1, ${CHARGES}) g;
      UPDATE pay_later_charges c SET token_id = 'benchtok' || substr(b.confirmation_code, 7)::int
      FROM bookings b WHERE b.id = c.booking_id;
      ANALYZE`)
    return merchant
  })

const main = Effect.gen(function*() {
  const settings = readSettings()
  const server = yield* benchServer(settings)
  yield* step(`database server: ${server.description}`)
  const url = yield* createDatabase(server.adminUrl, "partner_bench_pay_later")
  const config = Layer.setConfigProvider(ConfigProvider.fromMap(
    new Map([["LOG_LEVEL", "Warning"], ["PAY_LATER_CHARGER_CONCURRENCY", CONCURRENCY], [
      "SURFBOARD_TIMEOUT_MS",
      "10000"
    ]])
  ))
  const instance = () =>
    Layer.build(
      PayLaterCharger.Default.pipe(
        Layer.provide([ExternalSystemsLive, OutboxLive]),
        Layer.provide(layerFromUrl(url, 6)),
        Layer.provide(config)
      )
    )
  const db = yield* Layer.build(layerFromUrl(url, 6))
  const sandbox = yield* startSandbox({ port: 0 }).pipe(Effect.provide(db))
  yield* step(`Surfboard sandbox (in process) on ${sandbox.baseUrl}`)
  const merchant = yield* prepare(sandbox).pipe(Effect.provide(db))
  yield* step(`${CHARGES.toLocaleString("en")} due pay-later charges with saved cards written`)
  const [a, b] = [yield* instance(), yield* instance()]

  const drain = (at: Date) =>
    Effect.gen(function*() {
      let claimed = 0
      const one = (ctx: typeof a) =>
        Effect.gen(function*() {
          let n = 0
          for (;;) {
            const s = yield* Effect.flatMap(PayLaterCharger, (c) => c.run({ at, batch: BATCH })).pipe(
              Effect.provide(ctx)
            )
            n += s.claimed
            if (s.errors > 0) yield* Effect.logWarning(`${s.errors} charges failed in a run`)
            if (s.claimed === 0) return n
          }
        })
      const counts = yield* Effect.all([one(a), one(b)], { concurrency: 2 })
      claimed += counts[0] + counts[1]
      return { claimed, perInstance: counts }
    })

  // The first attempts: SOFT of the cards decline softly (the sandbox's switch for the merchant, off after).
  const soft = Math.round(CHARGES * SOFT)
  const now = new Date()
  const [first, firstRound] = yield* Effect.timed(
    soft > 0
      ? Effect.acquireUseRelease(
        sandbox.faults.set({ mitOutcome: "soft_decline" }, { merchantId: merchant.id }),
        () =>
          Effect.gen(function*() {
            // The first `soft` charges (by charge order) meet the declining card.
            const sql = yield* Effect.provide(SqlClient.SqlClient, db)
            yield* sql`UPDATE pay_later_charges SET claimed_until = now() + interval '1 hour'
              WHERE booking_id IN (SELECT id FROM bookings WHERE confirmation_code > ${`BENCH-${
              String(soft).padStart(6, "0")
            }`})`
              .pipe(Effect.provide(db))
            const declined = yield* drain(now)
            yield* sql`UPDATE pay_later_charges SET claimed_until = NULL`.pipe(Effect.provide(db))
            return declined
          }),
        () => sandbox.faults.set({ mitOutcome: "paid" }, { merchantId: merchant.id })
      ).pipe(Effect.zipWith(drain(now), (x, y) => ({ claimed: x.claimed + y.claimed, perInstance: y.perInstance })))
      : drain(now)
  )
  yield* step(`first attempts: ${firstRound.claimed} claimed in ${Math.round(Duration.toMillis(first))} ms`)
  const [retry, retried] = yield* Effect.timed(drain(new Date(now.getTime() + 6 * 3_600_000 + 1000)))
  yield* step(`retries: ${retried.claimed} claimed in ${Math.round(Duration.toMillis(retry))} ms`)

  const sql = yield* Effect.provide(SqlClient.SqlClient, db)
  const [check] = yield* sql<{ collected: number; not_collected: number; payments: number; attempts: number }>`
    SELECT count(*) FILTER (WHERE state = 'collected')::int AS collected,
      count(*) FILTER (WHERE state <> 'collected')::int AS not_collected,
      (SELECT count(*)::int FROM booking_payments) AS payments,
      (SELECT count(*)::int FROM pay_later_attempts) AS attempts
    FROM pay_later_charges`
  const [doubles] = yield* sql<{ double_charged: number; paid_orders: number; orders: number }>`
    SELECT count(*) FILTER (WHERE paid > 1)::int AS double_charged, coalesce(sum(paid), 0)::int AS paid_orders,
      coalesce(sum(orders), 0)::int AS orders
    FROM (SELECT body->'controlFunctions'->'initiatePaymentsOptions'->'paymentMethodParams'->>'tokenId' AS token,
            count(*) FILTER (WHERE status = 'PAYMENT_COMPLETED') AS paid, count(*) AS orders
          FROM surfboard_sandbox.orders WHERE merchant_id = ${merchant.id} AND reference_id LIKE 'paylater:%'
          GROUP BY 1) t`
  const seconds = Duration.toSeconds(first) + Duration.toSeconds(retry)
  console.log(
    "\ncharges  soft first  attempts  orders  paid  collected  double charged  booking payments  time (s)  rate (charges/s)"
  )
  console.log(
    [
      CHARGES,
      soft,
      check!.attempts,
      doubles!.orders,
      doubles!.paid_orders,
      check!.collected,
      doubles!.double_charged,
      check!.payments,
      seconds.toFixed(1),
      (CHARGES / seconds).toFixed(0)
    ].join("  ")
  )
  if (doubles!.double_charged !== 0 || check!.collected !== CHARGES || check!.payments !== CHARGES) {
    return yield* Effect.dieMessage("the charger charged a card twice, or left charges uncollected")
  }
})

NodeRuntime.runMain(Effect.scoped(main), { disableErrorReporting: false })
