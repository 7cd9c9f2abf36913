/**
 * `mail` end to end (twelve CLI processes, hence the long timeout): real CLI processes on a test database (SMTP_URL unset, so the local mailbox):
 * the outbox listed, flushed, the mailbox listed, filtered, shown, a failed message queued again.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Outbox } from "../../src/email/Outbox.js"
import { cli, json } from "../support/cli.js"
import { cancelledGuest, outboxOn } from "../support/outbox.js"
import { freshDatabase } from "../support/server.js"

class DatabaseUrl extends Effect.Tag("test/DatabaseUrl")<DatabaseUrl, string>() {}

const env = Layer.unwrapEffect(
  Effect.map(freshDatabase, (url) => Layer.merge(outboxOn(url), Layer.succeed(DatabaseUrl, url)))
)

const run = (db: string, ...args: Array<string>) => Effect.promise(() => cli(db, ...args))
const fails = (db: string, ...args: Array<string>) =>
  Effect.promise(() => cli(db, ...args).then(() => "", (e: Error) => e.message))

layer(env, { excludeTestServices: true, timeout: 180_000 })("CLI: mail", (it) => {
  it.effect(
    "lists the outbox, flushes it into the local mailbox, lists, filters and shows the mailbox, retries a failed message",
    () =>
      Effect.gen(function*() {
        const db = yield* DatabaseUrl
        const sql = yield* SqlClient.SqlClient
        const outbox = yield* Outbox
        const kari = yield* outbox.enqueue(cancelledGuest("CLI-1", "Kari@Example.com", "nb"))
        const ola = yield* outbox.enqueue(cancelledGuest("CLI-2", "ola@example.com"))

        const pending = json(yield* run(db, "mail", "outbox", "--status", "pending"))
        expect(pending.map((m: any) => m.id).sort()).toEqual([kari.id, ola.id].sort())
        expect(pending[0]).toMatchObject({ status: "pending", attempts: 0, template: "booking_cancelled_guest" })
        expect(json(yield* run(db, "mail", "list"))).toEqual([])

        expect(json(yield* run(db, "mail", "flush"))).toEqual({
          transport: "mailbox",
          claimed: 2,
          sent: 2,
          retried: 0,
          failed: 0
        })

        const listed = json(yield* run(db, "mail", "list", "--limit", "2"))
        expect(listed.map((m: any) => m.message_id)).toEqual([ola.messageId, kari.messageId])
        expect(listed[1]).toMatchObject({
          from: "Fjord Explorer <booking@fjordexplorer.no>",
          to: ["kari@example.com"],
          subject: "Bestillingen din CLI-1 er kansellert"
        })
        const toKari = json(yield* run(db, "mail", "list", "--to", "KARI@example.com"))
        expect(toKari.map((m: any) => m.message_id)).toEqual([kari.messageId])

        const shown = json(yield* run(db, "mail", "show", String(listed[1].id)))
        expect(shown.text).toContain("Hei Kari Nordmann,")
        expect(shown.html).toContain("<html lang=\"nb\">")
        expect(shown.headers).toMatchObject({ "X-Outbox-Id": kari.id })
        expect(yield* fails(db, "mail", "show", "999999")).toContain("no message #999999")

        // A message that failed for good, queued again by hand, goes out on the next flush.
        yield* sql`UPDATE email_outbox SET status = 'failed', failed_at = now(), last_error = 'test' WHERE id = ${ola.id}`
        expect(json(yield* run(db, "mail", "outbox", "--status", "failed")).map((m: any) => m.id)).toEqual([ola.id])
        expect(yield* run(db, "mail", "retry", ola.id)).toContain("queued again")
        expect(yield* fails(db, "mail", "retry", ola.id)).toContain("is not failed")
        expect(json(yield* run(db, "mail", "flush"))).toMatchObject({ sent: 1 })
        expect(json(yield* run(db, "mail", "list", "--to", "ola@example.com"))).toHaveLength(2)
      }),
    170_000
  )
})
