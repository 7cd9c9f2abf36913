/**
 * The operators and what belongs to them: their users and each user's role (memberships), their
 * sites, and the Partner API's secret keys made for them. What the operator dashboard will do, used
 * today by the admin CLI and the demo seed. Key secrets are returned once, never stored.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { generateSecretKey, hashSecret } from "../partner/auth/apiKey.js"
import { isTimeZone } from "../domain/localDay.js"
import { isScope, type Scope } from "../partner/auth/scopes.js"

/** An admin command (CLI) refused: the message says what to fix. */
export class AdminError extends Data.TaggedError("AdminError")<{ readonly message: string }> {}

export type Role = "owner" | "admin" | "member"

export interface NewKey {
  readonly createdBy: string
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly operatorIds: ReadonlyArray<string>
  readonly expiresAt: Date
  readonly createdAt?: Date
}

export interface KeyListing {
  readonly id: string
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly created_by: string
  readonly created_at: Date
  readonly expires_at: Date
  readonly revoked_at: Date | null
  readonly operators: ReadonlyArray<string>
}

export class Operators extends Effect.Service<Operators>()("Operators/Operators", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const one = <A>(rows: ReadonlyArray<A>, what: string) =>
      rows[0] === undefined ? Effect.fail(new AdminError({ message: `${what} not found` })) : Effect.succeed(rows[0])

    const createOperator = Effect.fn("Operators.createOperator")(function*(
      o: { name: string; timezone?: string; legalName?: string; orgNumber?: string }
    ) {
      const timezone = o.timezone ?? "Europe/Oslo"
      if (!isTimeZone(timezone)) {
        return yield* new AdminError({ message: `unknown time zone ${timezone}: use an IANA name such as Europe/Oslo` })
      }
      const [row] = yield* sql<{ id: string }>`
        INSERT INTO operators (name, timezone, legal_name, org_number)
        VALUES (${o.name}, ${timezone}, ${o.legalName ?? null}, ${o.orgNumber ?? null})
        RETURNING id`
      return row!.id
    })

    const createUser = Effect.fn("Operators.createUser")((u: { email: string; name: string }) =>
      sql<{ id: string }>`INSERT INTO users (email, name) VALUES (${u.email.toLowerCase()}, ${u.name}) RETURNING id`.pipe(
        Effect.map((r) => r[0]!.id)
      ))

    const userByEmail = Effect.fn("Operators.userByEmail")((email: string) =>
      sql<{ id: string }>`SELECT id FROM users WHERE email = ${email.toLowerCase()}`.pipe(
        Effect.flatMap((r) => one(r, `user ${email}`)),
        Effect.map((r) => r.id)
      ))

    const setMembership = Effect.fn("Operators.setMembership")((operatorId: string, userId: string, role: Role) =>
      sql`
        INSERT INTO memberships (operator_id, user_id, role) VALUES (${operatorId}, ${userId}, ${role})
        ON CONFLICT (operator_id, user_id) DO UPDATE SET role = excluded.role, updated_at = now()`.pipe(Effect.asVoid))

    const changeRole = Effect.fn("Operators.changeRole")((operatorId: string, userId: string, role: Role) =>
      sql<{ user_id: string }>`
        UPDATE memberships SET role = ${role}, updated_at = now()
        WHERE operator_id = ${operatorId} AND user_id = ${userId} RETURNING user_id`.pipe(
        Effect.flatMap((r) => one(r, "membership")),
        Effect.asVoid
      ))

    const createSite = Effect.fn("Operators.createSite")((s: { domain: string; name: string; ownerOperatorId: string }) =>
      sql<{ id: string }>`
        INSERT INTO sites (domain, name, owner_operator_id) VALUES (${s.domain.toLowerCase()}, ${s.name}, ${s.ownerOperatorId})
        RETURNING id`.pipe(Effect.map((r) => r[0]!.id)))

    const addSiteOperator = Effect.fn("Operators.addSiteOperator")((siteId: string, operatorId: string) =>
      sql`INSERT INTO site_operators (site_id, operator_id) VALUES (${siteId}, ${operatorId}) ON CONFLICT DO NOTHING`.pipe(
        Effect.asVoid
      ))

    /** Creates a key; the creator must be owner or admin of every operator picked. */
    const createKey = Effect.fn("Operators.createKey")(function*(k: NewKey) {
      const bad = k.scopes.filter((s) => !isScope(s))
      if (bad.length > 0) return yield* new AdminError({ message: `unknown scopes: ${bad.join(", ")}` })
      if (k.operatorIds.length === 0) return yield* new AdminError({ message: "pick at least one operator" })
      const allowed = yield* sql<{ operator_id: string }>`
        SELECT operator_id FROM memberships
        WHERE user_id = ${k.createdBy} AND role IN ('owner', 'admin') AND operator_id IN ${sql.in(k.operatorIds)}`
      const missing = k.operatorIds.filter((id) => !allowed.some((a) => a.operator_id === id))
      if (missing.length > 0) {
        return yield* new AdminError({ message: `the creator is not owner or admin of: ${missing.join(", ")}` })
      }
      const generated = generateSecretKey()
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO api_keys (id, secret_hash, name, scopes, created_by, created_at, expires_at)
          VALUES (${generated.id}, ${hashSecret(generated.secret)}, ${k.name}, ${`{${k.scopes.join(",")}}`}::text[],
            ${k.createdBy}, ${k.createdAt ?? new Date()}, ${k.expiresAt})`
        for (const operatorId of new Set(k.operatorIds)) {
          yield* sql`INSERT INTO api_key_operators (key_id, operator_id) VALUES (${generated.id}, ${operatorId})`
        }
      }))
      return { id: generated.id, token: generated.token, scopes: k.scopes as ReadonlyArray<Scope> }
    })

    const listKeys = Effect.fn("Operators.listKeys")((filter: { operatorId?: string | undefined } = {}) =>
      sql<KeyListing>`
        SELECT k.id, k.name, k.scopes, u.email AS created_by, k.created_at, k.expires_at, k.revoked_at,
          array_agg(o.name ORDER BY o.name) AS operators
        FROM api_keys k
        JOIN users u ON u.id = k.created_by
        JOIN api_key_operators ko ON ko.key_id = k.id
        JOIN operators o ON o.id = ko.operator_id
        ${filter.operatorId ? sql`WHERE k.id IN (SELECT key_id FROM api_key_operators WHERE operator_id = ${filter.operatorId})` : sql``}
        GROUP BY k.id, u.email
        ORDER BY k.created_at DESC`)

    const revokeKey = Effect.fn("Operators.revokeKey")((id: string, at?: Date) =>
      sql<{ id: string }>`
        UPDATE api_keys SET revoked_at = coalesce(revoked_at, ${at ?? new Date()}) WHERE id = ${id} RETURNING id`.pipe(
        Effect.flatMap((r) => one(r, `key ${id}`)),
        Effect.asVoid
      ))

    return {
      createOperator,
      createUser,
      userByEmail,
      setMembership,
      changeRole,
      createSite,
      addSiteOperator,
      createKey,
      listKeys,
      revokeKey
    } as const
  })
}) {}
