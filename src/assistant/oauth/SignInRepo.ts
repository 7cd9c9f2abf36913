/**
 * The SQL of signing in to the assistant's authorization server: a person by email with their
 * password hash, setting a password (admin CLI), and the operators a person may give a connection
 * (owner or admin). A database error is a defect here, once (repoEdge).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"

export const SignInUser = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  password_hash: Schema.NullOr(Schema.String)
})

export const ManagedOperator = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: Schema.Literal("owner", "admin")
})
export type ManagedOperator = typeof ManagedOperator.Type

export class SignInRepo extends Effect.Service<SignInRepo>()("Assistant/SignInRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const userByEmail = SqlSchema.findOne({
      Request: Schema.String,
      Result: SignInUser,
      execute: (email) => sql`SELECT id, email, name, password_hash FROM users WHERE email = ${email.toLowerCase()}`
    })

    const userById = SqlSchema.findOne({
      Request: Schema.String,
      Result: SignInUser,
      execute: (id) => sql`SELECT id, email, name, password_hash FROM users WHERE id::text = ${id}`
    })

    /** Sets the hash; answers whether the person exists. */
    const setPasswordHash = SqlSchema.findAll({
      Request: Schema.Struct({ email: Schema.String, hash: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ email, hash }) =>
        sql`UPDATE users SET password_hash = ${hash} WHERE email = ${email.toLowerCase()} RETURNING id`
    })

    /** The operators the person is owner or admin of, by name. */
    const managedOperators = SqlSchema.findAll({
      Request: Schema.String,
      Result: ManagedOperator,
      execute: (userId) =>
        sql`
          SELECT o.id, o.name, m.role FROM memberships m JOIN operators o ON o.id = m.operator_id
          WHERE m.user_id = ${userId} AND m.role IN ('owner', 'admin')
          ORDER BY o.name, o.id`
    })

    return repoEdge("SignInRepo", { userByEmail, userById, setPasswordHash, managedOperators })
  })
}) {}
