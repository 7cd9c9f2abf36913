/**
 * Desk terminals and quickbook keys: register and deactivate terminals of a selling operator,
 * issue (live or test) and revoke keys, bind a key to terminals, and authenticate a request's key
 * plus `Quickbook-Terminal` (spec §5). The key is checked first (401), then the terminal (403).
 */
import { Clock, Effect, Option } from "effect"
import { AdminError } from "../../operators/Operators.js"
import { hashSecret, secretMatches } from "../../partner/auth/apiKey.js"
import { QbForbidden, unauthorized } from "../errors.js"
import { generateQuickbookKey, parseQuickbookKey, type QuickbookKeyMode } from "./key.js"
import { QuickbookKeysRepo, type TerminalRow } from "./QuickbookKeysRepo.js"

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
    const repo = yield* QuickbookKeysRepo

    /** A terminal that exists (just written, or checked). */
    const terminalById = (id: string) =>
      Effect.flatMap(
        repo.terminals({ id }),
        ([row]) => (row ? Effect.succeed(toTerminal(row)) : Effect.dieMessage(`terminal ${id} vanished`))
      )

    /** Fails with a message naming the first id that is not an existing row of `table`. */
    const mustExist = (
      table: "operators" | "quickbook_terminals" | "quickbook_keys",
      what: string,
      ids: ReadonlyArray<string>
    ) =>
      Effect.gen(function*() {
        for (const id of ids) {
          const wellFormed = table === "quickbook_keys" ? /^[A-Za-z0-9]{1,64}$/.test(id) : UUID.test(id)
          const found = wellFormed && (yield* repo.exists({ table, id })).found
          if (!found) return yield* new AdminError({ message: `${what} ${id} not found` })
        }
      })

    /** A terminal's or key's name as the table takes it (1 to 200 characters), named in the message otherwise. */
    const mustBeName = (what: string, name: string) =>
      name.trim().length >= 1 && name.length <= 200
        ? Effect.void
        : Effect.fail(
          new AdminError({
            message: `the ${what} name must be 1 to 200 characters, not ${JSON.stringify(name.slice(0, 40))}`
          })
        )

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
      const { id } = yield* repo.insertTerminal({ operatorId, name, paymentTerminalId })
      return yield* terminalById(id)
    })

    const deactivateTerminal = Effect.fn("QuickbookKeys.deactivateTerminal")(function*(terminalId: string) {
      if (!UUID.test(terminalId)) return false
      return Option.isSome(yield* repo.deactivateTerminal(terminalId))
    })

    /** Sets (or, with null, clears) the card terminal a desk terminal takes payments on. */
    const setPaymentTerminal = Effect.fn("QuickbookKeys.setPaymentTerminal")(function*(
      terminalId: string,
      paymentTerminalId: string | null
    ) {
      yield* mustBePaymentTerminal(paymentTerminalId)
      yield* mustExist("quickbook_terminals", "terminal", [terminalId])
      yield* repo.setPaymentTerminal({ terminalId, paymentTerminalId })
      return yield* terminalById(terminalId)
    })

    /** Every terminal, or an operator's (an operator that does not exist is named). */
    const listTerminals = Effect.fn("QuickbookKeys.listTerminals")((operatorId?: string) =>
      Effect.zipRight(
        operatorId !== undefined ? mustExist("operators", "operator", [operatorId]) : Effect.void,
        Effect.map(repo.terminals(operatorId !== undefined ? { operatorId } : {}), (rows) => rows.map(toTerminal))
      )
    )

    const issueKey = Effect.fn("QuickbookKeys.issueKey")(function*(
      options: { readonly mode: QuickbookKeyMode; readonly name: string; readonly terminals: ReadonlyArray<string> }
    ) {
      yield* mustBeName("key", options.name)
      yield* mustExist("quickbook_terminals", "terminal", options.terminals)
      const made = generateQuickbookKey(options.mode)
      yield* repo.insertKey(
        { id: made.id, mode: made.mode, name: options.name, secretHash: hashSecret(made.secret) },
        options.terminals
      )
      return { id: made.id, mode: made.mode, name: options.name, token: made.token, terminals: options.terminals }
    })

    /** Every key (no secrets), newest first, with the terminals it is bound to (oldest terminal first); or those bound to an operator's terminals. */
    const listKeys = Effect.fn("QuickbookKeys.listKeys")((operatorId?: string) =>
      Effect.zipRight(
        operatorId !== undefined ? mustExist("operators", "operator", [operatorId]) : Effect.void,
        repo.keys(operatorId).pipe(
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
        )
      )
    )

    const bindKey = Effect.fn("QuickbookKeys.bindKey")(function*(keyId: string, terminalIds: ReadonlyArray<string>) {
      yield* mustExist("quickbook_keys", "key", [keyId])
      yield* mustExist("quickbook_terminals", "terminal", terminalIds)
      for (const terminalId of terminalIds) yield* repo.bind({ keyId, terminalId })
    })

    /** Unbinds; false when the key was not bound to the terminal. A key or terminal that does not exist is named. */
    const unbindKey = Effect.fn("QuickbookKeys.unbindKey")(function*(keyId: string, terminalId: string) {
      yield* mustExist("quickbook_keys", "key", [keyId])
      yield* mustExist("quickbook_terminals", "terminal", [terminalId])
      return Option.isSome(yield* repo.unbind({ keyId, terminalId }))
    })

    const revokeKey = Effect.fn("QuickbookKeys.revokeKey")(function*(keyId: string) {
      return Option.isSome(yield* repo.revoke(keyId))
    })

    const expireKey = Effect.fn("QuickbookKeys.expireKey")((keyId: string, at: Date) => repo.expire({ keyId, at }))

    /** The key (401 `unauthorized` on any failure). */
    const authenticateKey = Effect.fn("QuickbookKeys.authenticateKey")(function*(token: string) {
      if (token === "") return yield* unauthorized("send the key as `Authorization: Bearer svcqb_live_...`")
      const parts = parseQuickbookKey(token)
      if (!parts) return yield* unauthorized("not a quickbook key (svcqb_live_... or svcqb_test_...)")
      const found = yield* repo.keyById(parts.id)
      if (Option.isNone(found)) return yield* unauthorized("the key is not valid")
      const row = found.value
      if (row.mode !== parts.mode || !secretMatches(parts.secret, row.secret_hash)) {
        return yield* unauthorized("the key is not valid")
      }
      if (row.revoked_at !== null) return yield* unauthorized("the key has been revoked")
      const now = yield* Clock.currentTimeMillis
      if (row.expires_at !== null && row.expires_at.getTime() <= now) return yield* unauthorized("the key has expired")
      return { id: row.id, mode: row.mode, name: row.name } satisfies QuickbookKey
    })

    /** The terminal for an authenticated key (403 `terminal_not_registered`). */
    const terminalFor = Effect.fn("QuickbookKeys.terminalFor")(function*(key: QuickbookKey, terminalId: string) {
      const found = yield* repo.terminalForKey({ keyId: key.id, terminalId })
      if (Option.isNone(found)) return yield* terminalNotRegistered("no such terminal")
      const row = found.value
      if (row.deactivated_at !== null) return yield* terminalNotRegistered("the terminal is deactivated")
      if (!row.bound) return yield* terminalNotRegistered("the terminal is not bound to this key")
      return toTerminal(row)
    })

    /**
     * The caller a sale was made by, as it stands now (for steps that run after the request, e.g. a
     * book finished by the recovery job): None when the terminal is no longer active or bound to the key.
     */
    const callerOf = Effect.fn("QuickbookKeys.callerOf")(function*(keyId: string, terminalId: string) {
      const found = yield* repo.keyById(keyId)
      if (Option.isNone(found)) return Option.none<QuickbookCaller>()
      const key = found.value
      const terminal = yield* terminalFor({ id: key.id, mode: key.mode, name: key.name }, terminalId).pipe(
        Effect.option
      )
      return Option.map(
        terminal,
        (t): QuickbookCaller => ({ key: { id: key.id, mode: key.mode, name: key.name }, terminal: t })
      )
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
  }),
  dependencies: [QuickbookKeysRepo.Default]
}) {}
