/** `keys limits` and `audit list` end to end: real processes (as `npm run cli -- ...` runs them) on a test database. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import pg from "pg"
import { cli, json } from "../support/cli.js"
import { freshDatabase } from "../support/server.js"

describe("CLI: daily limits and audit", () => {
  it("sets, shows and resets a key's daily limits; lists the audit log by key, operator and limit", {
    timeout: 120_000
  }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Nordic Kayak AS"))
    await cli(db, "users", "create", "--email", "anna@nordickayak.no", "--name", "Anna")
    await cli(db, "members", "add", "--operator", op, "--user", "anna@nordickayak.no", "--role", "owner")
    const created = await cli(
      db,
      "keys",
      "create",
      "--user",
      "anna@nordickayak.no",
      "--operator",
      op,
      "--scope",
      "checkins:write",
      "--name",
      "Door scanner"
    )
    const key = /svc_live_([A-Za-z0-9]{20})_/.exec(created)![1]!

    const set = json(await cli(db, "keys", "limits", "set", key, "--checkins", "20", "--cancels", "3"))
    expect(set).toEqual([
      { action: "checkins", limit: 20, overridden: true, used_today: 0 },
      { action: "payment_links", limit: 50, overridden: false, used_today: 0 },
      { action: "cancels", limit: 3, overridden: true, used_today: 0 },
      { action: "reschedules", limit: 20, overridden: false, used_today: 0 }
    ])
    expect(json(await cli(db, "keys", "limits", "show", key))).toEqual(set)
    const reset = json(await cli(db, "keys", "limits", "reset", key, "--action", "cancels"))
    expect(reset[0]).toMatchObject({ action: "checkins", limit: 20, overridden: true })
    expect(reset[2]).toMatchObject({ action: "cancels", limit: 20, overridden: false })
    await expect(cli(db, "keys", "limits", "set", key)).rejects.toThrow(/give at least one/)
    await expect(cli(db, "keys", "limits", "show", "NoSuchKeyAAAAAAAAAAA")).rejects.toThrow(/not found/)

    const client = new pg.Client({ connectionString: db })
    await client.connect()
    try {
      for (let i = 0; i < 3; i++) {
        await client.query(
          `INSERT INTO write_audit (key_id, operator_id, action, target_id, request_id, idempotency_key, outcome, status, reason, detail)
           VALUES ($1, $2, 'checkins', $3, $4, 'idem-0000' || $5, $6, $7, $8, $9)`,
          [
            key,
            i === 2 ? null : op,
            `row-${i}`,
            `req-${i}`,
            String(i),
            i === 1 ? "refused" : "done",
            i === 1 ? 404 : 200,
            i === 1 ? "not-found" : null,
            null
          ]
        )
      }
    } finally {
      await client.end()
    }
    const all = json(await cli(db, "audit", "list", "--key", key))
    expect(all.map((a: any) => a.target_id)).toEqual(["row-2", "row-1", "row-0"])
    expect(all[1]).toMatchObject({
      key_id: key,
      operator_id: op,
      action: "checkins",
      request_id: "req-1",
      outcome: "refused",
      status: 404,
      reason: "not-found"
    })
    expect(json(await cli(db, "audit", "list", "--operator", op)).map((a: any) => a.target_id)).toEqual([
      "row-1",
      "row-0"
    ])
    expect(json(await cli(db, "audit", "list", "--limit", "1"))).toHaveLength(1)
  })
})
