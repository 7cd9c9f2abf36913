/** The outbox for tests: on a given database, with settings from a map (SMTP_URL set or not). */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import { MailerLive } from "../../src/adapters/MailerLive.js"
import { layerFromUrl } from "../../src/db/Database.js"
import { type EnqueueRequest, Outbox } from "../../src/email/Outbox.js"
import type { Locale } from "../../src/email/rules.js"

/** Short backoff so that retries happen within a test. */
export const FAST_RETRIES = {
  OUTBOX_RETRY_BASE_MS: "300",
  OUTBOX_RETRY_MAX_MS: "1000",
  OUTBOX_MAX_ATTEMPTS: "4",
  MAIL_FROM: "Fjord Explorer <booking@fjordexplorer.no>",
  LOG_LEVEL: "Warning"
}

export const outboxOn = (databaseUrl: string, env: Record<string, string> = {}) =>
  Outbox.Default.pipe(
    Layer.provide(MailerLive),
    Layer.provideMerge(layerFromUrl(databaseUrl, 4)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...FAST_RETRIES, ...env })))))
  )

/** A guest's cancellation email for booking reference `ref`. */
export const cancelledGuest = (
  ref: string,
  to: string | ReadonlyArray<string> = "kari@example.com",
  locale: Locale = "en"
): EnqueueRequest => ({
  dedupeKey: `booking:${ref}:cancelled:guest`,
  to,
  locale,
  template: "booking_cancelled_guest",
  data: {
    guestName: "Kari Nordmann",
    operatorName: "Fjord Explorer AS",
    tourName: "Geirangerfjord Cruise",
    bookingReference: ref,
    departure: { date: "2026-11-21", startTime: "10:15" },
    participants: 2,
    refund: { outcome: "refunded", amount: { amountMinor: 99800, currency: "NOK" } }
  }
})

export const outboxRow = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{
      status: string
      attempts: number
      last_error: string | null
      transport_response: string | null
      message_id: string
      due_in_ms: number
    }>`
      SELECT status, attempts, last_error, transport_response, message_id,
        (extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000)::int AS due_in_ms
      FROM email_outbox WHERE id = ${id}`).pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

export const mailboxCount = (messageId?: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`
      SELECT count(*)::int AS n FROM mail_mailbox
      WHERE ${messageId === undefined ? sql`true` : sql`message_id = ${messageId}`}`).pipe(
      Effect.map((rows) => rows[0]!.n),
      Effect.orDie
    )
