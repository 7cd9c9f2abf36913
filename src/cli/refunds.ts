/**
 * CLI for refunds (src/partner/cancels/CancelRefunds.ts, src/partner/paymentLinks/LinkRefunds.ts):
 * `refunds list` shows refunds that are not complete (or all), oldest first, for the person who
 * finishes an alerted refund by hand: a cancel's (`source: "cancel"`, with the booking) and a
 * balance paid through a link after its booking-system booking was cancelled (`source:
 * "payment_link"`, with the link and its manifest row);
 * `refunds recover` runs the booking-change recovery's cancel part now (open cancels finished,
 * due refunds asked again with the same reference). Output is JSON.
 */
import { Command, Options } from "@effect/cli"
import { SqlClient } from "@effect/sql"
import { Console, Effect, Layer } from "effect"
import { Cancels } from "../partner/cancels/Cancels.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const list = Command.make(
  "list",
  {
    state: Options.choice("state", ["open", "failed", "all"]).pipe(
      Options.withDefault("open"),
      Options.withDescription("open: not complete (requested, settling, failed); failed: refused by the provider; all")
    ),
    limit: Options.integer("limit").pipe(Options.withDefault(50), Options.withDescription("1 to 1000, default 50"))
  },
  (o) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const states = o.state === "open" ? ["requested", "settling", "failed"] : o.state === "failed" ? ["failed"] : null
      const limit = Math.min(Math.max(o.limit, 1), 1000)
      const cancels = yield* sql<{ created_at: Date; seq: number }>`
        SELECT 'cancel' AS source, r.id, r.booking_id, b.confirmation_code, b.status AS booking_status, r.change_id, r.method, r.state,
          r.amount_minor::int AS amount_minor, r.refunded_minor::int AS refunded_minor, r.currency, r.seq, r.attempts,
          r.last_error, r.idempotency_reference, p.merchant_id, p.provider_order_id, r.provider_refund_order_id,
          r.next_attempt_at, r.alerted_at, r.created_at, r.completed_at
        FROM booking_refunds r JOIN bookings b ON b.id = r.booking_id JOIN booking_payments p ON p.id = r.payment_id
        WHERE ${states === null ? sql`true` : sql`r.state IN ${sql.in(states)}`}
        ORDER BY r.created_at, r.seq LIMIT ${limit}`
      const links = yield* sql<{ created_at: Date; seq: number }>`
        SELECT 'payment_link' AS source, r.id, r.link_id, l.manifest_row_id, m.reference, m.status AS row_status, l.operator_id,
          r.reason, r.method, r.state, r.amount_minor::int AS amount_minor, r.refunded_minor::int AS refunded_minor, r.currency,
          r.seq, r.attempts, r.last_error, r.idempotency_reference, r.merchant_id, r.purchase_order_id AS provider_order_id,
          r.payment_id AS provider_payment_id, r.provider_refund_order_id, r.next_attempt_at, r.alerted_at, r.created_at,
          r.completed_at
        FROM payment_link_refunds r JOIN payment_links l ON l.id = r.link_id LEFT JOIN manifest_rows m ON m.id = l.manifest_row_id
        WHERE ${states === null ? sql`true` : sql`r.state IN ${sql.in(states)}`}
        ORDER BY r.created_at, r.seq LIMIT ${limit}`
      const rows = [...cancels, ...links]
        .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.seq - b.seq)
        .slice(0, limit)
      yield* print(rows)
    }).pipe(Effect.provide(DatabaseForCli))
).pipe(
  Command.withDescription(
    "refunds of cancels and of balances paid after cancellation that are not complete (default), refused, or all"
  )
)

const recover = Command.make("recover", {}, () =>
  Effect.flatMap(Cancels, (cancels) => cancels.recover()).pipe(
    Effect.flatMap(print),
    Effect.provide(Layer.unwrapEffect(
      Effect.promise(() => import("../adapters/live.js")).pipe(
        Effect.map(({ ExternalSystemsLive, OutboxLive }) =>
          Cancels.Default.pipe(Layer.provide([ExternalSystemsLive, OutboxLive]), Layer.provideMerge(DatabaseForCli))
        )
      )
    ))
  )).pipe(Command.withDescription("finish open cancels and ask again for due refunds now (what the recovery job does)"))

export const refunds = Command.make("refunds").pipe(Command.withSubcommands([list, recover]))
