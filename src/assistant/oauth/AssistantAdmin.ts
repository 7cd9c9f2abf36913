/**
 * What the admin CLI does for the assistant (`npm run cli -- assistant …`; the demo uses it too):
 * set a person's password (scrypt), list connections, revoke one.
 */
import { Data, Effect } from "effect"
import { Connections } from "./Connections.js"
import { hashPassword, MIN_PASSWORD_LENGTH } from "./password.js"
import { SignInRepo } from "./SignInRepo.js"

export class AssistantAdminError extends Data.TaggedError("AssistantAdminError")<{ readonly message: string }> {}

export class AssistantAdmin extends Effect.Service<AssistantAdmin>()("Assistant/AssistantAdmin", {
  effect: Effect.gen(function*() {
    const users = yield* SignInRepo
    const connections = yield* Connections

    const setPassword = Effect.fn("AssistantAdmin.setPassword")(function*(email: string, password: string) {
      if (password.length < MIN_PASSWORD_LENGTH) {
        return yield* new AssistantAdminError({ message: `a password has at least ${MIN_PASSWORD_LENGTH} characters` })
      }
      const hash = yield* Effect.promise(() => hashPassword(password))
      const updated = yield* users.setPasswordHash({ email, hash })
      if (updated.length === 0) return yield* new AssistantAdminError({ message: `no user with the email ${email}` })
    })

    const listConnections = Effect.fn("AssistantAdmin.listConnections")((email?: string) => connections.list(email))

    const revokeConnection = Effect.fn("AssistantAdmin.revokeConnection")(function*(id: string) {
      const revoked = yield* connections.revoke(id)
      if (!revoked) return yield* new AssistantAdminError({ message: `no active connection ${id}` })
    })

    return { setPassword, listConnections, revokeConnection } as const
  }),
  dependencies: [SignInRepo.Default, Connections.Default]
}) {}
