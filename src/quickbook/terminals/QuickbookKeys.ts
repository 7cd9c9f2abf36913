/**
 * Desk terminals and quickbook keys: register and deactivate terminals of a selling operator,
 * issue (live or test) and revoke keys, bind a key to terminals, and authenticate a request's key
 * plus `Quickbook-Terminal` (spec §5). The key is checked first (401), then the terminal (403).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import { hashSecret, secretMatches } from "../../partner/auth/apiKey.js"
import { AdminError } from "../../operators/Operators.js"
import { QbForbidden, unauthorized } from "../errors.js"
import { generateQuickbookKey, parseQuickbookKey, type QuickbookKeyMode } from "./key.js"

export interface Terminal {
  readonly id: string
  readonly name: string
  readonly operatorId: string
  readonly operatorName: string
  /** The card terminal at the payment provider this desk takes payments on; null: it cannot charge. */
  readonly paymentTerminalId: string | null
  readonly active: boolean
  readonly createdAt: Date
}

export interface QuickbookKey {
  readonly id: string
  readonly mode: QuickbookKeyMode
  readonly name: string
}

export interface QuickbookCaller {
  readonly key: QuickbookKey
  readonly terminal: Terminal
}

interface KeyListing {
  readonly id: string
  readonly mode: QuickbookKeyMode
  readonly name: string
  readonly terminals: Array<string>
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
}

interface TerminalRow {
  readonly id: string
  readonly name: string
  readonly operator_id: string
  readonly operator_name: string
  readonly payment_terminal_id: string | null
  readonly deactivated_at: Date | null
  readonly created_at: Date
}

const toTerminal = (r: TerminalRow): Terminal => ({
  id: r.id,
  name: r.name,
  operatorId: r.operator_id,
  operatorName: r.operator_name,
  paymentTerminalId: r.payment_terminal_id,
  active: r.deactivated_at === null,
  createdAt: r.created_at
})

const terminalNotRegistered = (detail: string) => new QbForbidden({ code: "terminal_not_registered", detail })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class QuickbookKeys extends Effect.Service<QuickbookKeys>()("Quickbook/Keys", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const terminalRows = (where: { id?: string; operatorId?: string }) =>
      sql<TerminalRow>`
        SELECT t.id, t.name, t.operator_id, o.name AS operator_name, t.payment_terminal_id, t.deactivated_at, t.created_at
        FROM quickbook_terminals t JOIN operators o ON o.id = t.operator_id
        WHERE ${where.id !== undefined ? sql`t.id = ${where.id}` : sql`true`}
          AND ${where.operatorId !== undefined ? sql`t.operator_id = ${where.operatorId}` : sql`true`}
        ORDER BY t.created_at, t.id`.pipe(Effect.orDie)

    /** Fails with a message naming the first id that is not an existing row of `table`. */
    const mustExist = (table: "operators" | "quickbook_terminals" | "quickbook_keys", what: string, ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        for (const id of ids) {
          const wellFormed = table === "quickbook_keys" ? /^[A-Za-z0-9]{1,64}$/.test(id) : UUID.test(id)
          const [found] = wellFormed
            ? yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)} WHERE id = ${id}`.pipe(Effect.orDie)
            : [{ n: 0 }]
          if (found!.n === 0) return yield* new AdminError({ message: `${what} ${id} not found` })
        }
      })

    /** A terminal's or key's name as the table takes it (1 to 200 characters), named in the message otherwise. */
    const mustBeName = (what: string, name: string) =>
      name.trim().length >= 1 && name.length <= 200
        ? Effect.void
        : Effect.fail(new AdminError({ message: `the ${what} name must be 1 to 200 characters, not ${JSON.stringify(name.slice(0, 40))}` }))

    /** A card terminal id, when given, is not blank (a blank one would match no payment: the desk could never book). */
    const mustBePaymentTerminal = (paymentTerminalId: string | null) =>
      paymentTerminalId === null || paymentTerminalId.trim() !== ""
        ? Effect.void
        : Effect.fail(new AdminError({ message: "the card terminal id must not be empty" }))

    const registerTerminal = Effect.fn("QuickbookKeys.registerTerminal")(function*(
      operatorId: string,
      name: string,
      paymentTerminalId: string | null = null
    ) {
      yield* mustBeName("terminal", name)
      yield* mustBePaymentTerminal(paymentTerminalId)
      yield* mustExist("operators", "operator", [operatorId])
      const [row] = yield* sql<{ id: string }>`
        INSERT INTO quickbook_terminals (operator_id, name, payment_terminal_id)
        VALUES (${operatorId}, ${name}, ${paymentTerminalId}) RETURNING id`.pipe(Effect.orDie)
      const [terminal] = yield* terminalRows({ id: row!.id })
      return toTerminal(terminal!)
    })

    const deactivateTerminal = Effect.fn("QuickbookKeys.deactivateTerminal")(function*(terminalId: string) {
      if (!UUID.test(terminalId)) return false
      const rows = yield* sql`
        UPDATE quickbook_terminals SET deactivated_at = coalesce(deactivated_at, now())
        WHERE id = ${terminalId} RETURNING id`.pipe(Effect.orDie)
      return rows.length > 0
    })

    /** Sets (or, with null, clears) the card terminal a desk terminal takes payments on. */
    const setPaymentTerminal = Effect.fn("QuickbookKeys.setPaymentTerminal")(function*(
      terminalId: string,
      paymentTerminalId: string | null
    ) {
      yield* mustBePaymentTerminal(paymentTerminalId)
      yield* mustExist("quickbook_terminals", "terminal", [terminalId])
      yield* sql`UPDATE quickbook_terminals SET payment_terminal_id = ${paymentTerminalId} WHERE id = ${terminalId}`.pipe(Effect.orDie)
      const [terminal] = yield* terminalRows({ id: terminalId })
      return toTerminal(terminal!)
    })

    /** Every terminal, or an operator's (an operator that does not exist is named). */
    const listTerminals = Effect.fn("QuickbookKeys.listTerminals")((operatorId?: string) =>
      Effect.zipRight(
        operatorId !== undefined ? mustExist("operators", "operator", [operatorId]) : Effect.void,
        Effect.map(terminalRows(operatorId !== undefined ? { operatorId } : {}), (rows) => rows.map(toTerminal))
      ))

    const issueKey = Effect.fn("QuickbookKeys.issueKey")(function*(
      options: { readonly mode: QuickbookKeyMode; readonly name: string; readonly terminals: ReadonlyArray<string> }
    ) {
      yield* mustBeName("key", options.name)
      yield* mustExist("quickbook_terminals", "terminal", options.terminals)
      const made = generateQuickbookKey(options.mode)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO quickbook_keys (id, mode, name, secret_hash)
          VALUES (${made.id}, ${made.mode}, ${options.name}, ${hashSecret(made.secret)})`
        for (const terminal of options.terminals) {
          yield* sql`INSERT INTO quickbook_key_terminals (key_id, terminal_id) VALUES (${made.id}, ${terminal})`
        }
      })).pipe(Effect.orDie)
      return { id: made.id, mode: made.mode, name: options.name, token: made.token, terminals: options.terminals }
    })

    /** Every key (no secrets), newest first, with the terminals it is bound to (oldest terminal first); or those bound to an operator's terminals. */
    const listKeys = Effect.fn("QuickbookKeys.listKeys")((operatorId?: string) =>
      Effect.zipRight(operatorId !== undefined ? mustExist("operators", "operator", [operatorId]) : Effect.void, sql<KeyListing>`
        SELECT k.id, k.mode, k.name,
          COALESCE(array_agg(t.id::text ORDER BY t.created_at, t.id) FILTER (WHERE t.id IS NOT NULL), '{}') AS terminals,
          k.created_at, k.expires_at, k.revoked_at
        FROM quickbook_keys k
          LEFT JOIN quickbook_key_terminals kt ON kt.key_id = k.id
          LEFT JOIN quickbook_terminals t ON t.id = kt.terminal_id
        ${operatorId !== undefined
          ? sql`WHERE EXISTS (SELECT 1 FROM quickbook_key_terminals b JOIN quickbook_terminals t ON t.id = b.terminal_id
              WHERE b.key_id = k.id AND t.operator_id::text = ${operatorId})`
          : sql``}
        GROUP BY k.id
        ORDER BY k.created_at DESC, k.id`.pipe(
        Effect.orDie,
        Effect.map((rows) =>
          rows.map((r) => ({
            id: r.id,
            mode: r.mode,
            name: r.name,
            terminals: r.terminals,
            createdAt: r.created_at,
            expiresAt: r.expires_at,
            revokedAt: r.revoked_at
          }))
        )
      )))

    const bindKey = Effect.fn("QuickbookKeys.bindKey")(function*(keyId: string, terminalIds: ReadonlyArray<string>) {
      yield* mustExist("quickbook_keys", "key", [keyId])
      yield* mustExist("quickbook_terminals", "terminal", terminalIds)
      for (const terminal of terminalIds) {
        yield* sql`
          INSERT INTO quickbook_key_terminals (key_id, terminal_id) VALUES (${keyId}, ${terminal})
          ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
      }
    })

    /** Unbinds; false when the key was not bound to the terminal. A key or terminal that does not exist is named. */
    const unbindKey = Effect.fn("QuickbookKeys.unbindKey")(function*(keyId: string, terminalId: string) {
      yield* mustExist("quickbook_keys", "key", [keyId])
      yield* mustExist("quickbook_terminals", "terminal", [terminalId])
      const rows = yield* sql`
        DELETE FROM quickbook_key_terminals WHERE key_id = ${keyId} AND terminal_id = ${terminalId} RETURNING key_id`.pipe(Effect.orDie)
      return rows.length > 0
    })

    const revokeKey = Effect.fn("QuickbookKeys.revokeKey")(function*(keyId: string) {
      const rows = yield* sql`
        UPDATE quickbook_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${keyId} RETURNING id`.pipe(Effect.orDie)
      return rows.length > 0
    })

    const expireKey = Effect.fn("QuickbookKeys.expireKey")((keyId: string, at: Date) =>
      sql`UPDATE quickbook_keys SET expires_at = ${at} WHERE id = ${keyId}`.pipe(Effect.orDie, Effect.asVoid))

    /** The key (401 `unauthorized` on any failure). */
    const authenticateKey = Effect.fn("QuickbookKeys.authenticateKey")(function*(token: string) {
      if (token === "") return yield* unauthorized("send the key as `Authorization: Bearer svcqb_live_...`")
      const parts = parseQuickbookKey(token)
      if (!parts) return yield* unauthorized("not a quickbook key (svcqb_live_... or svcqb_test_...)")
      const [row] = yield* sql<{
        id: string
        mode: QuickbookKeyMode
        name: string
        secret_hash: Uint8Array
        expires_at: Date | null
        revoked_at: Date | null
      }>`SELECT id, mode, name, secret_hash, expires_at, revoked_at FROM quickbook_keys WHERE id = ${parts.id}`.pipe(
        Effect.orDie
      )
      if (!row || row.mode !== parts.mode || !secretMatches(parts.secret, row.secret_hash)) {
        return yield* unauthorized("the key is not valid")
      }
      if (row.revoked_at !== null) return yield* unauthorized("the key has been revoked")
      const now = yield* Clock.currentTimeMillis
      if (row.expires_at !== null && row.expires_at.getTime() <= now) return yield* unauthorized("the key has expired")
      return { id: row.id, mode: row.mode, name: row.name } satisfies QuickbookKey
    })

    /** The terminal for an authenticated key (403 `terminal_not_registered`). */
    const terminalFor = Effect.fn("QuickbookKeys.terminalFor")(function*(key: QuickbookKey, terminalId: string) {
      const [row] = yield* sql<TerminalRow & { bound: boolean }>`
        SELECT t.id, t.name, t.operator_id, o.name AS operator_name, t.payment_terminal_id, t.deactivated_at, t.created_at,
          EXISTS (SELECT 1 FROM quickbook_key_terminals kt WHERE kt.key_id = ${key.id} AND kt.terminal_id = t.id) AS bound
        FROM quickbook_terminals t JOIN operators o ON o.id = t.operator_id
        WHERE t.id = ${terminalId}`.pipe(Effect.orDie)
      if (!row) return yield* terminalNotRegistered("no such terminal")
      if (row.deactivated_at !== null) return yield* terminalNotRegistered("the terminal is deactivated")
      if (!row.bound) return yield* terminalNotRegistered("the terminal is not bound to this key")
      return toTerminal(row)
    })

    /**
     * The caller a sale was made by, as it stands now (for steps that run after the request, e.g. a
     * book finished by the recovery job): None when the terminal is no longer active or bound to the key.
     */
    const callerOf = Effect.fn("QuickbookKeys.callerOf")(function*(keyId: string, terminalId: string) {
      const [key] = yield* sql<QuickbookKey>`SELECT id, mode, name FROM quickbook_keys WHERE id = ${keyId}`.pipe(Effect.orDie)
      if (!key) return Option.none<QuickbookCaller>()
      const terminal = yield* terminalFor({ id: key.id, mode: key.mode, name: key.name }, terminalId).pipe(Effect.option)
      return Option.map(terminal, (t): QuickbookCaller => ({ key: { id: key.id, mode: key.mode, name: key.name }, terminal: t }))
    })

    return {
      callerOf,
      registerTerminal,
      deactivateTerminal,
      setPaymentTerminal,
      listTerminals,
      issueKey,
      listKeys,
      bindKey,
      unbindKey,
      revokeKey,
      expireKey,
      authenticateKey,
      terminalFor
    } as const
  })
}) {}
