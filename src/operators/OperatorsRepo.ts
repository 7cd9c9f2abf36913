/**
 * The SQL of the operators and what belongs to them (Operators): `operators`, `users`,
 * `memberships`, `sites`, `site_operators`, and the Partner API's `api_keys` with the operators
 * each acts for. Typed with SqlSchema and the row schemas below; a database error (a duplicate
 * email or domain among them) or a row that does not decode is a defect at its edge (repoEdge: a
 * span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IdRow, repoEdge } from "../db/repoEdge.js"

const Role = Schema.Literal("owner", "admin", "member")

export const KeyListing = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_by: Schema.String,
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf),
  operators: Schema.Array(Schema.String)
})
export type KeyListing = typeof KeyListing.Type

const Membership = Schema.Struct({ operatorId: Schema.String, userId: Schema.String, role: Role })

const NewKey = Schema.Struct({
  id: Schema.String,
  secretHash: Schema.Uint8ArrayFromSelf,
  name: Schema.String,
  scopes: Schema.Array(Schema.String),
  createdBy: Schema.String,
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf
})

export class OperatorsRepo extends Effect.Service<OperatorsRepo>()("Operators/OperatorsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertOperator = SqlSchema.single({
      Request: Schema.Struct({
        name: Schema.String,
        timezone: Schema.String,
        legalName: Schema.NullOr(Schema.String),
        orgNumber: Schema.NullOr(Schema.String)
      }),
      Result: IdRow,
      execute: (o) =>
        sql`
          INSERT INTO operators (name, timezone, legal_name, org_number)
          VALUES (${o.name}, ${o.timezone}, ${o.legalName}, ${o.orgNumber})
          RETURNING id`
    })

    /** A user; the email as given (callers lower-case it). */
    const insertUser = SqlSchema.single({
      Request: Schema.Struct({ email: Schema.String, name: Schema.String }),
      Result: IdRow,
      execute: (u) => sql`INSERT INTO users (email, name) VALUES (${u.email}, ${u.name}) RETURNING id`
    })

    const userByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (email) => sql`SELECT id FROM users WHERE email = ${email}`
    })

    /** Adds the user to the operator with the role, or changes the role it has. */
    const upsertMembership = SqlSchema.void({
      Request: Membership,
      execute: (m) =>
        sql`
          INSERT INTO memberships (operator_id, user_id, role) VALUES (${m.operatorId}, ${m.userId}, ${m.role})
          ON CONFLICT (operator_id, user_id) DO UPDATE SET role = excluded.role, updated_at = now()`
    })

    /** Changes the role of a member; None when the user is no member of the operator. */
    const updateRole = SqlSchema.findOne({
      Request: Membership,
      Result: Schema.Struct({ user_id: Schema.String }),
      execute: (m) =>
        sql`
          UPDATE memberships SET role = ${m.role}, updated_at = now()
          WHERE operator_id = ${m.operatorId} AND user_id = ${m.userId} RETURNING user_id`
    })

    const insertSite = SqlSchema.single({
      Request: Schema.Struct({ domain: Schema.String, name: Schema.String, ownerOperatorId: Schema.String }),
      Result: IdRow,
      execute: (s) =>
        sql`
          INSERT INTO sites (domain, name, owner_operator_id) VALUES (${s.domain}, ${s.name}, ${s.ownerOperatorId})
          RETURNING id`
    })

    /** Adds an operator to a site (once). */
    const addSiteOperator = SqlSchema.void({
      Request: Schema.Struct({ siteId: Schema.String, operatorId: Schema.String }),
      execute: (s) =>
        sql`INSERT INTO site_operators (site_id, operator_id) VALUES (${s.siteId}, ${s.operatorId}) ON CONFLICT DO NOTHING`
    })

    /** Of these operators, those the user is owner or admin of. */
    const managedBy = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, operatorIds: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ operator_id: Schema.String }),
      execute: ({ operatorIds, userId }) =>
        sql`
          SELECT operator_id FROM memberships
          WHERE user_id = ${userId} AND role IN ('owner', 'admin') AND operator_id IN ${sql.in(operatorIds)}`
    })

    const insertKeyRow = SqlSchema.void({
      Request: NewKey,
      execute: (k) =>
        sql`
          INSERT INTO api_keys (id, secret_hash, name, scopes, created_by, created_at, expires_at)
          VALUES (${k.id}, ${k.secretHash}, ${k.name}, ${`{${k.scopes.join(",")}}`}::text[],
            ${k.createdBy}, ${k.createdAt}, ${k.expiresAt})`
    })

    const insertKeyOperator = SqlSchema.void({
      Request: Schema.Struct({ keyId: Schema.String, operatorId: Schema.String }),
      execute: (r) => sql`INSERT INTO api_key_operators (key_id, operator_id) VALUES (${r.keyId}, ${r.operatorId})`
    })

    /** A secret key and the operators it acts for, in one transaction. */
    const insertKey = (key: typeof NewKey.Type, operatorIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* insertKeyRow(key)
        for (const operatorId of operatorIds) yield* insertKeyOperator({ keyId: key.id, operatorId })
      }).pipe(sql.withTransaction)

    /** Every key (no secrets), newest first, or those acting for an operator. */
    const keys = SqlSchema.findAll({
      Request: Schema.UndefinedOr(Schema.String),
      Result: KeyListing,
      execute: (operatorId) =>
        sql`
          SELECT k.id, k.name, k.scopes, u.email AS created_by, k.created_at, k.expires_at, k.revoked_at,
            array_agg(o.name ORDER BY o.name) AS operators
          FROM api_keys k
          JOIN users u ON u.id = k.created_by
          JOIN api_key_operators ko ON ko.key_id = k.id
          JOIN operators o ON o.id = ko.operator_id
          ${
          operatorId
            ? sql`WHERE k.id IN (SELECT key_id FROM api_key_operators WHERE operator_id = ${operatorId})`
            : sql``
        }
          GROUP BY k.id, u.email
          ORDER BY k.created_at DESC`
    })

    /** Revokes a key at `at` (once: the first time stays); None when there is no such key. */
    const revokeKey = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, at: Schema.DateFromSelf }),
      Result: IdRow,
      execute: ({ at, id }) =>
        sql`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${at}) WHERE id = ${id} RETURNING id`
    })

    return repoEdge("OperatorsRepo", {
      insertOperator,
      insertUser,
      userByEmail,
      upsertMembership,
      updateRole,
      insertSite,
      addSiteOperator,
      managedBy,
      insertKey,
      keys,
      revokeKey
    })
  })
}) {}
