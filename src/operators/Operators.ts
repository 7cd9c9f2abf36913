/**
 * The operators and what belongs to them: their users and each user's role (memberships), their
 * sites, and the Partner API's secret keys made for them. What the operator dashboard will do, used
 * today by the admin CLI and the demo seed. Key secrets are returned once, never stored. SQL:
 * OperatorsRepo.
 */
import { Data, Effect, Option } from "effect"
import { isTimeZone } from "../domain/localDay.js"
import { generateSecretKey, hashSecret } from "../partner/auth/apiKey.js"
import { isScope, type Scope } from "../partner/auth/scopes.js"
import { OperatorsRepo } from "./OperatorsRepo.js"

export type { KeyListing } from "./OperatorsRepo.js"

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

export class Operators extends Effect.Service<Operators>()("Operators/Operators", {
  effect: Effect.gen(function*() {
    const repo = yield* OperatorsRepo
    const found = <A>(row: Option.Option<A>, what: string) =>
      Option.match(row, {
        onNone: () => Effect.fail(new AdminError({ message: `${what} not found` })),
        onSome: Effect.succeed
      })

    const createOperator = Effect.fn("Operators.createOperator")(function*(
      o: { name: string; timezone?: string; legalName?: string; orgNumber?: string }
    ) {
      const timezone = o.timezone ?? "Europe/Oslo"
      if (!isTimeZone(timezone)) {
        return yield* new AdminError({ message: `unknown time zone ${timezone}: use an IANA name such as Europe/Oslo` })
      }
      const row = yield* repo.insertOperator({
        name: o.name,
        timezone,
        legalName: o.legalName ?? null,
        orgNumber: o.orgNumber ?? null
      })
      return row.id
    })

    const createUser = Effect.fn("Operators.createUser")((u: { email: string; name: string }) =>
      Effect.map(repo.insertUser({ email: u.email.toLowerCase(), name: u.name }), (row) => row.id)
    )

    const userByEmail = Effect.fn("Operators.userByEmail")(function*(email: string) {
      const row = yield* found(yield* repo.userByEmail(email.toLowerCase()), `user ${email}`)
      return row.id
    })

    const setMembership = Effect.fn("Operators.setMembership")((operatorId: string, userId: string, role: Role) =>
      repo.upsertMembership({ operatorId, userId, role })
    )

    const changeRole = Effect.fn("Operators.changeRole")(function*(operatorId: string, userId: string, role: Role) {
      yield* found(yield* repo.updateRole({ operatorId, userId, role }), "membership")
    })

    const createSite = Effect.fn("Operators.createSite")((
      s: { domain: string; name: string; ownerOperatorId: string }
    ) =>
      Effect.map(
        repo.insertSite({ domain: s.domain.toLowerCase(), name: s.name, ownerOperatorId: s.ownerOperatorId }),
        (row) => row.id
      )
    )

    const addSiteOperator = Effect.fn("Operators.addSiteOperator")((siteId: string, operatorId: string) =>
      repo.addSiteOperator({ siteId, operatorId })
    )

    /** Creates a key; the creator must be owner or admin of every operator picked. */
    const createKey = Effect.fn("Operators.createKey")(function*(k: NewKey) {
      const bad = k.scopes.filter((s) => !isScope(s))
      if (bad.length > 0) return yield* new AdminError({ message: `unknown scopes: ${bad.join(", ")}` })
      if (k.operatorIds.length === 0) return yield* new AdminError({ message: "pick at least one operator" })
      const allowed = yield* repo.managedBy({ userId: k.createdBy, operatorIds: k.operatorIds })
      const missing = k.operatorIds.filter((id) => !allowed.some((a) => a.operator_id === id))
      if (missing.length > 0) {
        return yield* new AdminError({ message: `the creator is not owner or admin of: ${missing.join(", ")}` })
      }
      const generated = generateSecretKey()
      yield* repo.insertKey({
        id: generated.id,
        secretHash: hashSecret(generated.secret),
        name: k.name,
        scopes: k.scopes,
        createdBy: k.createdBy,
        createdAt: k.createdAt ?? new Date(),
        expiresAt: k.expiresAt
      }, [...new Set(k.operatorIds)])
      return { id: generated.id, token: generated.token, scopes: k.scopes as ReadonlyArray<Scope> }
    })

    const listKeys = Effect.fn("Operators.listKeys")((filter: { operatorId?: string | undefined } = {}) =>
      repo.keys(filter.operatorId)
    )

    const revokeKey = Effect.fn("Operators.revokeKey")(function*(id: string, at?: Date) {
      yield* found(yield* repo.revokeKey({ id, at: at ?? new Date() }), `key ${id}`)
    })

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
  }),
  dependencies: [OperatorsRepo.Default]
}) {}
