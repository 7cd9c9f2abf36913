/** The quickbook CLI end to end: register terminals, issue and bind keys, deactivate, revoke. */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { layerFromUrl } from "../src/db/Database.js"
import { QuickbookKeys } from "../src/services/QuickbookKeys.js"
import { cli, json } from "./support/cli.js"
import { freshDatabase } from "./support/server.js"

describe("quickbook CLI", () => {
  it("registers terminals, issues live and test keys bound to them, binds, deactivates and revokes", { timeout: 120_000 }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Fjord Desk AS"))
    const t1 = json(await cli(db, "quickbook", "terminals", "register", "--operator", op, "--name", "Harbour desk 1"))
    const t2 = json(await cli(db, "quickbook", "terminals", "register", "--operator", op, "--name", "Harbour desk 2"))
    expect(t1).toMatchObject({ name: "Harbour desk 1", operatorId: op, operatorName: "Fjord Desk AS", active: true })

    await expect(cli(db, "quickbook", "keys", "issue", "--name", "Unbound")).rejects.toThrow(/at least one terminal/)
    // Mistyped ids are named, never a database error.
    await expect(cli(db, "quickbook", "terminals", "register", "--operator", "not-an-id", "--name", "X")).rejects.toThrow(/operator not-an-id not found/)
    await expect(cli(db, "quickbook", "terminals", "register", "--operator", "00000000-0000-4000-8000-000000000000", "--name", "X"))
      .rejects.toThrow(/operator 00000000-0000-4000-8000-000000000000 not found/)
    await expect(cli(db, "quickbook", "keys", "issue", "--name", "Typo", "--terminal", "nope")).rejects.toThrow(/terminal nope not found/)
    const issued = await cli(db, "quickbook", "keys", "issue", "--name", "Desk app", "--terminal", t1.id, "--test")
    const token = /svcqb_test_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}/.exec(issued)?.[0]
    expect(token, issued).toBeDefined()
    const live = /svcqb_live_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}/.exec(
      await cli(db, "quickbook", "keys", "issue", "--name", "Live app", "--terminal", t1.id, "--terminal", t2.id)
    )?.[0]
    expect(live).toBeDefined()
    const keyId = token!.slice("svcqb_test_".length, "svcqb_test_".length + 20)

    const check = <A, E>(f: (k: QuickbookKeys) => Effect.Effect<A, E>) =>
      Effect.runPromise(Effect.exit(Effect.flatMap(QuickbookKeys, f).pipe(
        Effect.provide(QuickbookKeys.Default),
        Effect.provide(layerFromUrl(db, 1))
      )))
    const terminalOk = async (tok: string, terminal: string) =>
      Exit.isSuccess(await check((k) => Effect.flatMap(k.authenticateKey(tok), (key) => k.terminalFor(key, terminal))))

    expect(await terminalOk(token!, t1.id)).toBe(true)
    expect(await terminalOk(token!, t2.id)).toBe(false)
    expect(await terminalOk(live!, t2.id)).toBe(true)
    expect(await cli(db, "quickbook", "keys", "bind", keyId, "--terminal", t2.id)).toContain("bound")
    expect(await terminalOk(token!, t2.id)).toBe(true)
    expect(await cli(db, "quickbook", "keys", "unbind", keyId, "--terminal", t2.id)).toContain("no longer bound")
    expect(await terminalOk(token!, t2.id)).toBe(false)

    expect(await cli(db, "quickbook", "terminals", "deactivate", t1.id)).toContain("deactivated")
    expect(await terminalOk(token!, t1.id)).toBe(false)
    expect(json(await cli(db, "quickbook", "terminals", "list", "--operator", op)).map((t: any) => [t.name, t.active]))
      .toEqual([["Harbour desk 1", false], ["Harbour desk 2", true]])

    expect(await cli(db, "quickbook", "keys", "revoke", keyId)).toContain("revoked")
    expect(Exit.isSuccess(await check((k) => k.authenticateKey(token!)))).toBe(false)
    expect(Exit.isSuccess(await check((k) => k.authenticateKey(live!)))).toBe(true)
  })
})
