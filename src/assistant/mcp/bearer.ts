/**
 * The MCP endpoint as a protected resource (MCP authorization spec, RFC 9728, RFC 6750): the bearer
 * token is an opaque access token of our authorization server, issued for this resource only
 * (RFC 8707); it leads to its grant, the grant to its connection, the connection to its key
 * (KeyAuth's `connectionKey`: revoked, or no picked operator left where the person is owner or
 * admin, is 401), all read in one statement on every call (BearerRepo) and the token checked by
 * the provider's own `AccessToken.find` on that row. A refusal answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"`.
 */
import { Effect, Option } from "effect"
import type Provider from "oidc-provider"
import { isDatabaseUnreachableError } from "../../db/unreachable.js"
import { connectionKey } from "../../partner/auth/KeyAuth.js"
import { withReadAccessToken } from "../oauth/adapter.js"
import { BearerRepo } from "./BearerRepo.js"
import type { ToolCaller } from "./toolCall.js"

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i

export type BearerOutcome =
  | {
    readonly _tag: "Authenticated"
    readonly caller: Omit<ToolCaller, "requestId">
    readonly token: string
    readonly expiresAt: number
    readonly clientId: string
  }
  | {
    readonly _tag: "Refused"
    readonly error: "invalid_request" | "invalid_token" | undefined
    readonly description: string
  }

const refused = (error: "invalid_request" | "invalid_token" | undefined, description: string): BearerOutcome => ({
  _tag: "Refused",
  error,
  description
})

/** `Bearer resource_metadata="…"`, with the error when there is one (none for a missing token, RFC 6750 §3.1). */
export const challenge = (resourceMetadataUrl: string, error?: string, description?: string, scope?: string) =>
  "Bearer " + [
    error ? `error="${error}"` : undefined,
    description ? `error_description="${description.replace(/["\\]/g, "")}"` : undefined,
    scope ? `scope="${scope}"` : undefined,
    `resource_metadata="${resourceMetadataUrl}"`
  ].filter((part) => part !== undefined).join(", ")

export const makeBearerAuth = (provider: Provider, resource: string) =>
  Effect.gen(function*() {
    const repo = yield* BearerRepo

    return Effect.fn("McpAuth.authenticate")(function*(authorization: string | undefined) {
      if (authorization === undefined || authorization === "") return refused(undefined, "send an access token")
      const token = BEARER.exec(authorization)?.[1]
      if (token === undefined) return refused("invalid_request", "use the Bearer scheme")
      // One statement: the token's entry, its connection and the connection's key as it acts right now.
      const read = yield* repo.byAccessToken(token)
      // The provider's own checks of the entry (format, expiry), on the row just read. A token that does not
      // parse is not valid; a database that does not answer is a defect (503), never a 401 that would make
      // the assistant drop a good token.
      const found = yield* Effect.promise(() =>
        withReadAccessToken(token, Option.map(read, (r) => r.token), () => provider.AccessToken.find(token)).catch(
          (error: unknown) => {
            if (isDatabaseUnreachableError(error)) throw error
            return undefined
          }
        )
      )
      if (found === undefined || found.isExpired || Option.isNone(read)) {
        return refused("invalid_token", "the access token is not valid")
      }
      const audiences = Array.isArray(found.aud) ? found.aud : [found.aud]
      if (!audiences.includes(resource)) {
        return refused("invalid_token", "the access token was not issued for this server")
      }
      const c = read.value.connection
      if (c === null) return refused("invalid_token", "the connection does not exist")
      const key = yield* connectionKey(read.value.key).pipe(Effect.either)
      if (key._tag === "Left") return refused("invalid_token", key.left.detail)
      return {
        _tag: "Authenticated",
        token,
        clientId: found.clientId ?? c.clientId,
        expiresAt: found.exp ?? Math.floor(Date.now() / 1000) + 60,
        caller: {
          key: key.right,
          connection: {
            connectionId: c.id,
            userId: c.userId,
            userEmail: c.userEmail,
            clientId: c.clientId,
            clientName: c.clientName
          }
        }
      } satisfies BearerOutcome
    })
  })
