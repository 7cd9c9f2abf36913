/**
 * The SQL of desk terminals and quickbook keys (QuickbookKeys): `quickbook_terminals`,
 * `quickbook_keys` and the binding of keys to terminals (migration 0014). Typed with SqlSchema and
 * the row schemas below; a database error or a row that does not decode is a defect here, once.
 *
 * The key and terminal look-ups run on every Quickbook request (`npm run bench:desk` measures the
 * desk's reads against a floor): they are decoded (one small row, about a microsecond) but have no
 * spans of their own, which would cost several times more (`repoEdge.untraced`:
 * QuickbookKeys.authenticateKey's and terminalFor's and the driver's cover them).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IdRow, repoEdge } from "../../db/repoEdge.js"

const Mode = Schema.Literal("live", "test")

export const TerminalRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  operator_id: Schema.String,
  operator_name: Schema.String,
  payment_terminal_id: Schema.NullOr(Schema.String),
  deactivated_at: Schema.NullOr(Schema.DateFromSelf),
  created_at: Schema.DateFromSelf
})
export type TerminalRow = typeof TerminalRow.Type

export const KeyListing = Schema.Struct({
  id: Schema.String,
  mode: Mode,
  name: Schema.String,
  /** The terminals it is bound to, oldest first. */
  terminals: Schema.Array(Schema.String),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const KeyRow = Schema.Struct({
  id: Schema.String,
  mode: Mode,
  name: Schema.String,
  secret_hash: Schema.Uint8ArrayFromSelf,
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const Binding = Schema.Struct({ keyId: Schema.String, terminalId: Schema.String })

export class QuickbookKeysRepo extends Effect.Service<QuickbookKeysRepo>()("Quickbook/KeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Every terminal, or one, or an operator's, oldest first. */
    const terminals = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.optional(Schema.String), operatorId: Schema.optional(Schema.String) }),
      Result: TerminalRow,
      execute: (where) =>
        sql`
            SELECT t.id, t.name, t.operator_id, o.name AS operator_name, t.payment_terminal_id, t.deactivated_at, t.created_at
            FROM quickbook_terminals t JOIN operators o ON o.id = t.operator_id
            WHERE ${where.id !== undefined ? sql`t.id = ${where.id}` : sql`true`}
              AND ${where.operatorId !== undefined ? sql`t.operator_id = ${where.operatorId}` : sql`true`}
            ORDER BY t.created_at, t.id`
    })

    /** Whether `table` has a row with this id (the id well-formed for it). */
    const exists = SqlSchema.single({
      Request: Schema.Struct({
        table: Schema.Literal("operators", "quickbook_terminals", "quickbook_keys"),
        id: Schema.String
      }),
      Result: Schema.Struct({ found: Schema.Boolean }),
      execute: ({ id, table }) => sql`SELECT EXISTS (SELECT 1 FROM ${sql(table)} WHERE id = ${id}) AS found`
    })

    const insertTerminal = SqlSchema.single({
      Request: Schema.Struct({
        operatorId: Schema.String,
        name: Schema.String,
        paymentTerminalId: Schema.NullOr(Schema.String)
      }),
      Result: IdRow,
      execute: (t) =>
        sql`
            INSERT INTO quickbook_terminals (operator_id, name, payment_terminal_id)
            VALUES (${t.operatorId}, ${t.name}, ${t.paymentTerminalId}) RETURNING id`
    })

    /** Deactivates a terminal (once: the first time stays); None when there is no such terminal. */
    const deactivateTerminal = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (terminalId) =>
        sql`
            UPDATE quickbook_terminals SET deactivated_at = coalesce(deactivated_at, now())
            WHERE id = ${terminalId} RETURNING id`
    })

    const setPaymentTerminal = SqlSchema.void({
      Request: Schema.Struct({ terminalId: Schema.String, paymentTerminalId: Schema.NullOr(Schema.String) }),
      execute: (t) =>
        sql`UPDATE quickbook_terminals SET payment_terminal_id = ${t.paymentTerminalId} WHERE id = ${t.terminalId}`
    })

    const insertKeyRow = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        mode: Mode,
        name: Schema.String,
        secretHash: Schema.Uint8ArrayFromSelf
      }),
      execute: (k) =>
        sql`INSERT INTO quickbook_keys (id, mode, name, secret_hash) VALUES (${k.id}, ${k.mode}, ${k.name}, ${k.secretHash})`
    })

    const insertBinding = SqlSchema.void({
      Request: Binding,
      execute: (b) =>
        sql`INSERT INTO quickbook_key_terminals (key_id, terminal_id) VALUES (${b.keyId}, ${b.terminalId})`
    })

    /** A new key and its bindings, in one transaction. */
    const insertKey = (
      key: {
        readonly id: string
        readonly mode: "live" | "test"
        readonly name: string
        readonly secretHash: Uint8Array
      },
      terminalIds: ReadonlyArray<string>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* insertKeyRow(key)
        for (const terminalId of terminalIds) yield* insertBinding({ keyId: key.id, terminalId })
      }))

    /** Every key (no secrets), newest first, with its terminals; or those bound to an operator's terminals. */
    const keys = SqlSchema.findAll({
      Request: Schema.UndefinedOr(Schema.String),
      Result: KeyListing,
      execute: (operatorId) =>
        sql`
            SELECT k.id, k.mode, k.name,
              COALESCE(array_agg(t.id::text ORDER BY t.created_at, t.id) FILTER (WHERE t.id IS NOT NULL), '{}') AS terminals,
              k.created_at, k.expires_at, k.revoked_at
            FROM quickbook_keys k
              LEFT JOIN quickbook_key_terminals kt ON kt.key_id = k.id
              LEFT JOIN quickbook_terminals t ON t.id = kt.terminal_id
            ${
          operatorId !== undefined
            ? sql`WHERE EXISTS (SELECT 1 FROM quickbook_key_terminals b JOIN quickbook_terminals t ON t.id = b.terminal_id
                  WHERE b.key_id = k.id AND t.operator_id::text = ${operatorId})`
            : sql``
        }
            GROUP BY k.id
            ORDER BY k.created_at DESC, k.id`
    })

    /** Binds a key to a terminal (a binding that exists stays). */
    const bind = SqlSchema.void({
      Request: Binding,
      execute: (b) =>
        sql`
            INSERT INTO quickbook_key_terminals (key_id, terminal_id) VALUES (${b.keyId}, ${b.terminalId})
            ON CONFLICT DO NOTHING`
    })

    /** Unbinds; None when the key was not bound to the terminal. */
    const unbind = SqlSchema.findOne({
      Request: Binding,
      Result: Schema.Struct({ key_id: Schema.String }),
      execute: (b) =>
        sql`
            DELETE FROM quickbook_key_terminals WHERE key_id = ${b.keyId} AND terminal_id = ${b.terminalId}
            RETURNING key_id`
    })

    /** Revokes a key (once: the first time stays); None when there is no such key. */
    const revoke = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (keyId) =>
        sql`UPDATE quickbook_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${keyId} RETURNING id`
    })

    const expire = SqlSchema.void({
      Request: Schema.Struct({ keyId: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ at, keyId }) => sql`UPDATE quickbook_keys SET expires_at = ${at} WHERE id = ${keyId}`
    })

    const selectKey = SqlSchema.findOne({
      Request: Schema.String,
      Result: KeyRow,
      execute: (id) =>
        sql`SELECT id, mode, name, secret_hash, expires_at, revoked_at FROM quickbook_keys WHERE id = ${id}`
    })

    const selectTerminalForKey = SqlSchema.findOne({
      Request: Binding,
      Result: Schema.Struct({ ...TerminalRow.fields, bound: Schema.Boolean }),
      execute: (b) =>
        sql`
          SELECT t.id, t.name, t.operator_id, o.name AS operator_name, t.payment_terminal_id, t.deactivated_at,
            t.created_at,
            EXISTS (SELECT 1 FROM quickbook_key_terminals kt WHERE kt.key_id = ${b.keyId} AND kt.terminal_id = t.id) AS bound
          FROM quickbook_terminals t JOIN operators o ON o.id = t.operator_id
          WHERE t.id = ${b.terminalId}`
    })

    return {
      ...repoEdge("QuickbookKeysRepo", {
        terminals,
        exists,
        insertTerminal,
        deactivateTerminal,
        setPaymentTerminal,
        insertKey,
        keys,
        bind,
        unbind,
        revoke,
        expire
      }),
      ...repoEdge.untraced({
        /** The key with its secret's hash (a per-request look-up: see above). */
        keyById: (id: string) => selectKey(id),
        /** The terminal, and whether the key is bound to it (a per-request look-up: see above). */
        terminalForKey: (binding: typeof Binding.Type) => selectTerminalForKey(binding)
      })
    }
  })
}) {}
