/**
 * The quickbook CLI end to end: register terminals (with their card terminal), issue, list and bind
 * keys, deactivate, revoke; and marking booking-system accounts and merchants as sandboxes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { layerFromUrl } from "../../src/db/Database.js"
import { QuickbookKeys } from "../../src/quickbook/terminals/QuickbookKeys.js"
import { cli, json } from "../support/cli.js"
import { freshDatabase } from "../support/server.js"

describe("quickbook CLI", () => {
  it("registers terminals, issues live and test keys bound to them, binds, deactivates and revokes", {
    timeout: 120_000
  }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Fjord Desk AS"))
    const t1 = json(await cli(db, "quickbook", "terminals", "register", "--operator", op, "--name", "Harbour desk 1"))
    const t2 = json(
      await cli(
        db,
        "quickbook",
        "terminals",
        "register",
        "--operator",
        op,
        "--name",
        "Harbour desk 2",
        "--payment-terminal",
        "term-card-2"
      )
    )
    expect(t1).toMatchObject({
      name: "Harbour desk 1",
      operatorId: op,
      operatorName: "Fjord Desk AS",
      active: true,
      paymentTerminalId: null
    })
    expect(t2).toMatchObject({ name: "Harbour desk 2", paymentTerminalId: "term-card-2" })
    expect(
      json(await cli(db, "quickbook", "terminals", "set-payment-terminal", t1.id, "--payment-terminal", "term-card-1"))
    )
      .toMatchObject({ id: t1.id, paymentTerminalId: "term-card-1" })
    await expect(cli(db, "quickbook", "terminals", "set-payment-terminal", t1.id)).rejects.toThrow(
      /--payment-terminal <id> or --clear/
    )
    await expect(cli(db, "quickbook", "terminals", "set-payment-terminal", "nope", "--clear")).rejects.toThrow(
      /terminal nope not found/
    )

    await expect(cli(db, "quickbook", "keys", "issue", "--name", "Unbound")).rejects.toThrow(/at least one terminal/)
    // Mistyped ids are named, never a database error.
    await expect(cli(db, "quickbook", "terminals", "register", "--operator", "not-an-id", "--name", "X")).rejects
      .toThrow(/operator not-an-id not found/)
    await expect(
      cli(db, "quickbook", "terminals", "register", "--operator", "00000000-0000-4000-8000-000000000000", "--name", "X")
    )
      .rejects.toThrow(/operator 00000000-0000-4000-8000-000000000000 not found/)
    await expect(cli(db, "quickbook", "keys", "issue", "--name", "Typo", "--terminal", "nope")).rejects.toThrow(
      /terminal nope not found/
    )
    const issued = await cli(db, "quickbook", "keys", "issue", "--name", "Desk app", "--terminal", t1.id, "--test")
    const token = /svcqb_test_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}/.exec(issued)?.[0]
    expect(token, issued).toBeDefined()
    const live = /svcqb_live_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}/.exec(
      await cli(db, "quickbook", "keys", "issue", "--name", "Live app", "--terminal", t1.id, "--terminal", t2.id)
    )?.[0]
    expect(live).toBeDefined()
    const keyId = token!.slice("svcqb_test_".length, "svcqb_test_".length + 20)

    const check = <A, E>(f: (k: QuickbookKeys) => Effect.Effect<A, E>) =>
      Effect.runPromise(Effect.exit(
        Effect.flatMap(QuickbookKeys, f).pipe(
          Effect.provide(QuickbookKeys.Default),
          Effect.provide(layerFromUrl(db, 1))
        )
      ))
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
    expect(
      json(await cli(db, "quickbook", "terminals", "list", "--operator", op)).map((
        t: any
      ) => [t.name, t.active, t.paymentTerminalId])
    )
      .toEqual([["Harbour desk 1", false, "term-card-1"], ["Harbour desk 2", true, "term-card-2"]])

    expect(await cli(db, "quickbook", "keys", "revoke", keyId)).toContain("revoked")
    // keys list: no secrets; newest first; mode, terminals and dates; --operator keeps the keys bound to its terminals.
    const listed = await cli(db, "quickbook", "keys", "list")
    expect(listed).not.toContain("svcqb_")
    const liveId = live!.slice("svcqb_live_".length, "svcqb_live_".length + 20)
    expect(json(listed)).toEqual([
      {
        id: liveId,
        mode: "live",
        name: "Live app",
        terminals: [t1.id, t2.id],
        createdAt: expect.any(String),
        expiresAt: null,
        revokedAt: null
      },
      {
        id: keyId,
        mode: "test",
        name: "Desk app",
        terminals: [t1.id],
        createdAt: expect.any(String),
        expiresAt: null,
        revokedAt: expect.any(String)
      }
    ])
    const { id: other } = json(await cli(db, "operators", "create", "--name", "Other Desk AS"))
    expect(json(await cli(db, "quickbook", "keys", "list", "--operator", op)).map((k: any) => k.id)).toEqual([
      liveId,
      keyId
    ])
    expect(json(await cli(db, "quickbook", "keys", "list", "--operator", other))).toEqual([])
    expect(Exit.isSuccess(await check((k) => k.authenticateKey(token!)))).toBe(false)
    expect(Exit.isSuccess(await check((k) => k.authenticateKey(live!)))).toBe(true)
  })

  it("refuses bad input with a message naming it, never a database error", { timeout: 240_000 }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Input Desk AS"))
    // The service the CLI calls, for the setup and for the rules not worth a process each.
    const check = <A, E>(f: (k: QuickbookKeys) => Effect.Effect<A, E>) =>
      Effect.runPromise(Effect.exit(
        Effect.flatMap(QuickbookKeys, f).pipe(
          Effect.provide(QuickbookKeys.Default),
          Effect.provide(layerFromUrl(db, 1))
        )
      ))
    const valueOf = <A, E>(exit: Exit.Exit<A, E>) =>
      Exit.match(exit, {
        onFailure: (c) => {
          throw new Error(Cause.pretty(c))
        },
        onSuccess: (a) => a
      })
    const messageOf = (exit: Exit.Exit<unknown, unknown>) =>
      Exit.isFailure(exit)
        ? Cause.failureOption(exit.cause).pipe(Option.map((e: any) => e.message), Option.getOrUndefined)
        : undefined
    const t1 = valueOf(await check((k) => k.registerTerminal(op, "Harbour desk 1")))
    const t2 = valueOf(await check((k) => k.registerTerminal(op, "Harbour desk 2")))
    const key = valueOf(await check((k) => k.issueKey({ mode: "test", name: "Desk app", terminals: [t1.id] })))

    const refused = async (pattern: RegExp, ...args: Array<string>) => {
      const error = await cli(db, ...args).then(() => undefined, (e: unknown) => e)
      expect(error, args.join(" ")).toBeDefined()
      expect(String(error)).not.toMatch(/SqlError|Failed to execute statement/)
      expect(String(error)).toMatch(pattern)
    }
    await refused(
      /terminal name must be 1 to 200 characters/,
      "quickbook",
      "terminals",
      "register",
      "--operator",
      op,
      "--name",
      ""
    )
    await refused(/operator nope not found/, "quickbook", "terminals", "list", "--operator", "nope")
    await refused(/terminal nope not found/, "quickbook", "keys", "unbind", key.id, "--terminal", "nope")
    await refused(
      /card terminal id must not be empty/,
      "quickbook",
      "terminals",
      "set-payment-terminal",
      t1.id,
      "--payment-terminal",
      " "
    )
    // Unbinding a binding that is not there says so (and exits 0).
    expect(await cli(db, "quickbook", "keys", "unbind", key.id, "--terminal", t2.id)).toContain(
      `key ${key.id} was not bound to ${t2.id}`
    )

    expect(messageOf(await check((k) => k.registerTerminal(op, "x".repeat(201))))).toMatch(
      /terminal name must be 1 to 200 characters/
    )
    expect(messageOf(await check((k) => k.registerTerminal(op, "Desk", "")))).toBe(
      "the card terminal id must not be empty"
    )
    expect(messageOf(await check((k) => k.issueKey({ mode: "live", name: " ", terminals: [t1.id] })))).toMatch(
      /key name must be 1 to 200/
    )
    expect(messageOf(await check((k) => k.listKeys("nope")))).toBe("operator nope not found")
    expect(messageOf(await check((k) => k.unbindKey("nope!", t1.id)))).toBe("key nope! not found")
    // Nothing was written by the refusals.
    expect(valueOf(await check((k) => k.listTerminals(op))).map((t) => [t.name, t.paymentTerminalId])).toEqual([
      ["Harbour desk 1", null],
      ["Harbour desk 2", null]
    ])
  })

  it("marks booking-system accounts and merchants as sandboxes (test keys sell only through those)", {
    timeout: 120_000
  }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Sandbox Desk AS"))
    const create = (name: string, ...more: Array<string>) =>
      cli(
        db,
        "accounts",
        "create",
        "--name",
        name,
        "--base-url",
        "http://127.0.0.1:1/",
        "--access-key",
        name,
        "--secret-key",
        "s",
        ...more
      )
    const { id: sandboxAccount } = json(await create("Sandbox Bókun", "--sandbox"))
    const { id: liveAccount } = json(await create("Live Bókun"))
    const sandboxOf = async () =>
      Object.fromEntries(json(await cli(db, "accounts", "list")).map((a: any) => [a.name, a.sandbox]))
    expect(await sandboxOf()).toEqual({ "Live Bókun": false, "Sandbox Bókun": true })
    expect(await cli(db, "accounts", "mark", "--account", liveAccount, "--as", "sandbox")).toContain("is sandbox")
    expect(await cli(db, "accounts", "mark", "--account", sandboxAccount, "--as", "live")).toContain("is live")
    expect(await sandboxOf()).toEqual({ "Live Bókun": true, "Sandbox Bókun": false })
    await expect(cli(db, "accounts", "mark", "--account", "nope", "--as", "live")).rejects.toThrow(
      /account nope not found/
    )

    expect(
      await cli(
        db,
        "payment-accounts",
        "set",
        "--operator",
        op,
        "--merchant",
        "m-sandbox",
        "--sandbox",
        "--base-url",
        "http://127.0.0.1:2/",
        "--api-key",
        "k",
        "--api-secret",
        "s"
      )
    ).toContain("sandbox merchant m-sandbox")
    expect(json(await cli(db, "payment-accounts", "list"))).toEqual([{
      operator_id: op,
      operator_name: "Sandbox Desk AS",
      merchant_id: "m-sandbox",
      payment_page_terminal_id: null,
      base_url: "http://127.0.0.1:2",
      sandbox: true
    }])
    // Set again: replaced, live, through SURFBOARD_* (no address of its own).
    await cli(
      db,
      "payment-accounts",
      "set",
      "--operator",
      op,
      "--merchant",
      "m-live",
      "--payment-page-terminal",
      "pp-1"
    )
    expect(json(await cli(db, "payment-accounts", "list"))).toEqual([{
      operator_id: op,
      operator_name: "Sandbox Desk AS",
      merchant_id: "m-live",
      payment_page_terminal_id: "pp-1",
      base_url: null,
      sandbox: false
    }])
    await expect(cli(db, "payment-accounts", "set", "--operator", op, "--merchant", "m", "--base-url", "http://x"))
      .rejects.toThrow(/together, or none/)
    await expect(cli(db, "payment-accounts", "set", "--operator", "nope", "--merchant", "m")).rejects.toThrow(
      /operator nope not found/
    )
  })
})
