/**
 * The outbox on a real PostgreSQL, sending into the local mailbox (SMTP_URL unset): a message
 * exists exactly when the caller's transaction commits, a dedupe key enqueues once, the sender
 * delivers each message once with its Message-ID, abandoned claims are picked up again.
 * SMTP and its failures: test/adapters/smtp.test.ts.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { Outbox } from "../../src/email/Outbox.js"
import { cancelledGuest, mailboxCount, outboxOn, outboxRow } from "../support/outbox.js"
import { freshDatabase } from "../support/server.js"

const env = Layer.unwrapEffect(Effect.map(freshDatabase, (url) => outboxOn(url)))

const count = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM email_outbox`.pipe(Effect.map((r) => r[0]!.n))
)

class Boom {
  readonly _tag = "Boom"
}

layer(env, { excludeTestServices: true, timeout: 120_000 })("outbox (local mailbox)", (it) => {
  it.effect("a message exists exactly when the caller's transaction commits", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const before = yield* count

      // The state change and the email in one transaction that fails after both: neither remains.
      const rolledBack = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO operators (name) VALUES ('Rolled Back AS')`
        const queued = yield* outbox.enqueue(cancelledGuest("RB-1"))
        expect(queued.created).toBe(true)
        // Visible inside the transaction ...
        expect(yield* count).toBe(before + 1)
        return yield* Effect.fail(new Boom())
      })))
      expect(Exit.isFailure(rolledBack)).toBe(true)
      // ... and gone with it.
      expect(yield* count).toBe(before)
      expect((yield* sql`SELECT 1 FROM operators WHERE name = 'Rolled Back AS'`).length).toBe(0)
      // Its key was not used up: the same email can be enqueued by the write that succeeds.
      const committed = yield* sql.withTransaction(Effect.gen(function*() {
        const [op] = yield* sql<{ id: string }>`INSERT INTO operators (name) VALUES ('Committed AS') RETURNING id`
        return yield* outbox.enqueue({ ...cancelledGuest("RB-1"), operatorId: op!.id })
      }))
      expect(committed.created).toBe(true)
      expect(yield* count).toBe(before + 1)
      expect(yield* outboxRow(committed.id)).toMatchObject({ status: "pending", attempts: 0 })
      // Nothing was delivered by enqueueing.
      expect(yield* mailboxCount(committed.messageId)).toBe(0)
    }))

  it.effect("a dedupe key enqueues once: a replay, and ten transactions racing with the same key", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const first = yield* outbox.enqueue(cancelledGuest("DD-1"))
      const replay = yield* outbox.enqueue({ ...cancelledGuest("DD-1", "someone-else@example.com"), locale: "nb" })
      expect(first.created).toBe(true)
      expect(replay).toEqual({ ...first, created: false })

      const raced = yield* Effect.all(
        Array.from(
          { length: 10 },
          () => sql.withTransaction(Effect.zipLeft(outbox.enqueue(cancelledGuest("DD-2")), Effect.sleep("20 millis")))
        ),
        { concurrency: "unbounded" }
      )
      expect(new Set(raced.map((r) => r.id)).size).toBe(1)
      expect(raced.filter((r) => r.created).length).toBe(1)
      const rows = yield* sql<
        { n: number }
      >`SELECT count(*)::int AS n FROM email_outbox WHERE dedupe_key = 'booking:DD-2:cancelled:guest'`
      expect(rows[0]!.n).toBe(1)
      // The first write's message is the one kept: its recipient, its locale.
      const kept = yield* outbox.find("booking:DD-1:cancelled:guest")
      expect(kept).toMatchObject({ id: first.id, to_addresses: ["kari@example.com"], locale: "en" })
    }))

  it.effect("the sender delivers each due message once into the mailbox, as rendered, with its Message-ID", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      yield* outbox.flush()
      const queued = yield* Effect.forEach(
        ["SD-1", "SD-2", "SD-3"],
        (ref, i) =>
          outbox.enqueue({
            ...cancelledGuest(
              ref,
              i === 2 ? ["team@fjordexplorer.no", "ola@fjordexplorer.no"] : "kari@example.com",
              i === 1 ? "nb" : "en"
            ),
            replyTo: "post@fjordexplorer.no"
          })
      )
      const summary = yield* outbox.flush()
      expect(summary).toEqual({ claimed: 3, sent: 3, retried: 0, failed: 0 })
      for (const q of queued) {
        expect(yield* mailboxCount(q.messageId)).toBe(1)
        const row = yield* outboxRow(q.id)
        expect(row).toMatchObject({ status: "sent", attempts: 1, last_error: null })
        expect(row.transport_response).toMatch(/^stored in the local mailbox as #\d+$/)
        expect(q.messageId).toBe(`<${q.id}@fjordexplorer.no>`)
      }
      const [nb] = yield* sql<
        {
          from_address: string
          to_addresses: Array<string>
          reply_to: string
          subject: string
          text_body: string
          html_body: string
          headers: Record<string, string>
        }
      >`
        SELECT from_address, to_addresses, reply_to, subject, text_body, html_body, headers FROM mail_mailbox WHERE message_id = ${
        queued[1]!.messageId
      }`
      expect(nb).toMatchObject({
        from_address: "Fjord Explorer <booking@fjordexplorer.no>",
        to_addresses: ["kari@example.com"],
        reply_to: "post@fjordexplorer.no",
        subject: "Bestillingen din SD-2 er kansellert",
        headers: { "X-Outbox-Id": queued[1]!.id, "Auto-Submitted": "auto-generated" }
      })
      expect(nb!.text_body).toContain("Hei Kari Nordmann,")
      expect(nb!.html_body).toContain("<html lang=\"nb\">")
      const [team] = yield* sql<
        { to_addresses: Array<string> }
      >`SELECT to_addresses FROM mail_mailbox WHERE message_id = ${queued[2]!.messageId}`
      expect(team!.to_addresses).toEqual(["team@fjordexplorer.no", "ola@fjordexplorer.no"])

      // Nothing is due any more: another run sends nothing, the mailbox holds each message once.
      expect(yield* outbox.flush()).toEqual({ claimed: 0, sent: 0, retried: 0, failed: 0 })
      for (const q of queued) expect(yield* mailboxCount(q.messageId)).toBe(1)
      // A replayed enqueue of a sent message changes nothing.
      expect(yield* outbox.enqueue(cancelledGuest("SD-1"))).toMatchObject({
        id: queued[0]!.id,
        created: false,
        status: "sent"
      })
      expect(yield* outbox.flush()).toMatchObject({ claimed: 0 })
    }))

  it.effect("an unusable recipient makes the message failed at once, without failing the write", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const bad = yield* outbox.enqueue(cancelledGuest("UA-1", "not an address"))
      const none = yield* outbox.enqueue(cancelledGuest("UA-2", []))
      const header = yield* outbox.enqueue(cancelledGuest("UA-3", "kari@example.com\r\nBcc: everyone@example.com"))
      for (const q of [bad, none, header]) {
        expect(q).toMatchObject({ created: true, status: "failed" })
        expect((yield* outboxRow(q.id)).last_error).toContain("unusable recipient address")
      }
      yield* outbox.flush()
      for (const q of [bad, none, header]) expect(yield* mailboxCount(q.messageId)).toBe(0)
    }))

  it.effect("template data that does not fit its template is a defect: the caller's transaction rolls back", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const before = yield* count
      const request = cancelledGuest("TD-1")
      const exit = yield* Effect.exit(sql.withTransaction(Effect.gen(function*() {
        yield* sql`INSERT INTO operators (name) VALUES ('Bad Template AS')`
        yield* outbox.enqueue(
          {
            ...request,
            data: { ...request.data, departure: { date: "2026-13-01", startTime: null } }
          } as typeof request
        )
      })))
      expect(Exit.isFailure(exit) && Exit.causeOption(exit).pipe((c) => c._tag === "Some" && c.value._tag === "Die"))
        .toBe(true)
      expect(yield* count).toBe(before)
      expect((yield* sql`SELECT 1 FROM operators WHERE name = 'Bad Template AS'`).length).toBe(0)
    }))

  it.effect("deliverNow sends one message at once and answers its status; a sent message is never sent again", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const q = yield* outbox.enqueue(cancelledGuest("DN-1"))
      expect(yield* outbox.deliverNow(q.id)).toBe("sent")
      expect(yield* outbox.deliverNow(q.id)).toBe("sent")
      expect(yield* outbox.flush()).toMatchObject({ claimed: 0 })
      expect(yield* mailboxCount(q.messageId)).toBe(1)
    }))

  it.effect("a claim left by a sender that died is sent once its lease ends; at the last attempt it is failed", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const dead = yield* outbox.enqueue(cancelledGuest("AB-1"))
      const deadLast = yield* outbox.enqueue(cancelledGuest("AB-2"))
      const live = yield* outbox.enqueue(cancelledGuest("AB-3"))
      // As a sender leaves them when it dies after claiming: status sending, a lease, an attempt counted.
      yield* sql`
        UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 1,
          locked_until = now() - interval '1 second' WHERE id = ${dead.id}`
      yield* sql`
        UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 4,
          locked_until = now() - interval '1 second' WHERE id = ${deadLast.id}`
      // A sender still inside its lease: not touched.
      yield* sql`
        UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 1,
          locked_until = now() + interval '1 hour' WHERE id = ${live.id}`
      const summary = yield* outbox.flush()
      expect(summary).toMatchObject({ claimed: 1, sent: 1 })
      expect(yield* outboxRow(dead.id)).toMatchObject({ status: "sent", attempts: 2 })
      expect(yield* mailboxCount(dead.messageId)).toBe(1)
      const last = yield* outboxRow(deadLast.id)
      expect(last.status).toBe("failed")
      expect(last.last_error).toContain("may or may not have been sent")
      expect(yield* mailboxCount(deadLast.messageId)).toBe(0)
      expect(yield* outboxRow(live.id)).toMatchObject({ status: "sending", attempts: 1 })
      expect(yield* mailboxCount(live.messageId)).toBe(0)
      expect(yield* outbox.deliverNow(live.id)).toBe("sending")
      expect(yield* mailboxCount(live.messageId)).toBe(0)
    }))

  it.effect("deliverOrAwait answers an attempt's outcome, never `sending`: its own, or a dead sender's claim taken over (failed at the last attempt)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const fresh = yield* outbox.enqueue(cancelledGuest("DA-1"))
      expect(yield* outbox.deliverOrAwait(fresh.id)).toBe("sent")
      expect(yield* outbox.deliverOrAwait(fresh.id)).toBe("sent")
      expect(yield* mailboxCount(fresh.messageId)).toBe(1)
      expect(yield* outbox.deliverOrAwait((yield* outbox.enqueue(cancelledGuest("DA-2", "nobody"))).id)).toBe("failed")
      // Claims whose senders died (lease over): taken over and sent; at the last attempt, failed unsent.
      const dead = yield* outbox.enqueue(cancelledGuest("DA-3"))
      const deadLast = yield* outbox.enqueue(cancelledGuest("DA-4"))
      yield* sql`
        UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 1,
          locked_until = now() - interval '1 second' WHERE id = ${dead.id}`
      yield* sql`
        UPDATE email_outbox SET status = 'sending', claim_token = gen_random_uuid(), attempts = 4,
          locked_until = now() - interval '1 second' WHERE id = ${deadLast.id}`
      expect(yield* outbox.deliverOrAwait(dead.id)).toBe("sent")
      expect(yield* outboxRow(dead.id)).toMatchObject({ status: "sent", attempts: 2 })
      expect(yield* mailboxCount(dead.messageId)).toBe(1)
      expect(yield* outbox.deliverOrAwait(deadLast.id)).toBe("failed")
      expect(yield* mailboxCount(deadLast.messageId)).toBe(0)
    }))

  it.effect("a sender skips messages another sender is claiming at that moment instead of waiting for them (SKIP LOCKED)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      yield* outbox.flush()
      const a = yield* outbox.enqueue(cancelledGuest("SL-A"))
      const b = yield* outbox.enqueue(cancelledGuest("SL-B"))
      // Another sender in the middle of its claim: row A locked in an open transaction.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const claimer = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT id FROM email_outbox WHERE id = ${a.id} FOR UPDATE`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(release)
      })).pipe(Effect.fork)
      yield* Deferred.await(locked)
      // This sender takes B at once and leaves A alone; without SKIP LOCKED it would wait here.
      const summary = yield* outbox.sendDue().pipe(
        Effect.timeoutFail({
          duration: "3 seconds",
          onTimeout: () => new Error("the sender waited for a locked message")
        })
      )
      expect(summary).toEqual({ claimed: 1, sent: 1, retried: 0, failed: 0 })
      expect(yield* mailboxCount(b.messageId)).toBe(1)
      expect(yield* mailboxCount(a.messageId)).toBe(0)
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(claimer)
      expect(yield* outbox.flush()).toMatchObject({ claimed: 1, sent: 1 })
      expect(yield* mailboxCount(a.messageId)).toBe(1)
    }))

  it.effect("the team's addresses: the operator's members, by role", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const [op] = yield* sql<{ id: string }>`INSERT INTO operators (name) VALUES ('Team AS') RETURNING id`
      const [other] = yield* sql<{ id: string }>`INSERT INTO operators (name) VALUES ('Other AS') RETURNING id`
      for (
        const [email, role, operator] of [["owner@team.no", "owner", op!.id], ["admin@team.no", "admin", op!.id], [
          "member@team.no",
          "member",
          op!.id
        ], ["else@other.no", "owner", other!.id]] as const
      ) {
        const [u] = yield* sql<{ id: string }>`INSERT INTO users (email, name) VALUES (${email}, ${email}) RETURNING id`
        yield* sql`INSERT INTO memberships (operator_id, user_id, role) VALUES (${operator}, ${u!.id}, ${role})`
      }
      expect(yield* outbox.teamAddresses(op!.id)).toEqual(["admin@team.no", "member@team.no", "owner@team.no"])
      expect(yield* outbox.teamAddresses(op!.id, ["owner", "admin"])).toEqual(["admin@team.no", "owner@team.no"])
      expect(yield* outbox.teamAddresses(other!.id)).toEqual(["else@other.no"])
    }))

  it.effect("retry puts a failed message back with fresh attempts", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const q = yield* outbox.enqueue(cancelledGuest("RT-1", "nobody"))
      expect(q.status).toBe("failed")
      expect(yield* outbox.retry(q.id)).toBe(true)
      expect(yield* outbox.retry(q.id)).toBe(false)
      expect(yield* outboxRow(q.id)).toMatchObject({ status: "pending", attempts: 0 })
      expect((yield* outbox.list({ status: "pending" })).map((m) => m.id)).toContain(q.id)
    }))
})
