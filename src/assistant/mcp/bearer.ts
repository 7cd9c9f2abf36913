/**
 * The MCP endpoint as a protected resource (MCP authorization spec, RFC 9728, RFC 6750): the bearer
 * token is an opaque access token of our authorization server, issued for this resource only
 * (RFC 8707); it leads to its grant, the grant to its connection, the connection to its key
 * (KeyAuth.authenticateConnection: revoked, or no picked operator left where the person is owner or
 * admin, is 401). A refusal answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"`.
 */
import { Effect, Option } from "effect"
import type Provider from "oidc-provider"
import { isDatabaseUnreachableError } from "../../db/unreachable.js"
import { KeyAuth } from "../../partner/auth/KeyAuth.js"
import { Connections } from "../oauth/Connections.js"
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
    const keys = yield* KeyAuth
    const connections = yield* Connections

    return Effect.fn("McpAuth.authenticate")(function*(authorization: string | undefined) {
      if (authorization === undefined || authorization === "") return refused(undefined, "send an access token")
      const token = BEARER.exec(authorization)?.[1]
      if (token === undefined) return refused("invalid_request", "use the Bearer scheme")
      // A token that does not parse is not valid; a database that does not answer is a defect (503), never a 401
      // that would make the assistant drop a good token.
      const found = yield* Effect.promise(() =>
        provider.AccessToken.find(token).catch((error: unknown) => {
          if (isDatabaseUnreachableError(error)) throw error
          return undefined
        })
      )
      if (found === undefined || found.isExpired) return refused("invalid_token", "the access token is not valid")
      const audiences = Array.isArray(found.aud) ? found.aud : [found.aud]
      if (!audiences.includes(resource)) {
        return refused("invalid_token", "the access token was not issued for this server")
      }
      const connection = yield* connections.byGrant(found.grantId)
      if (Option.isNone(connection)) {
        return refused("invalid_token", "the connection does not exist")
      }
      const c = connection.value
      const key = yield* keys.authenticateConnection(c.id).pipe(Effect.either)
      if (key._tag === "Left") return refused("invalid_token", key.left.detail)
      return {
        _tag: "Authenticated",
        token,
        clientId: found.clientId ?? c.client_id,
        expiresAt: found.exp ?? Math.floor(Date.now() / 1000) + 60,
        caller: {
          key: key.right,
          connection: {
            connectionId: c.id,
            userId: c.user_id,
            userEmail: c.user_email,
            clientId: c.client_id,
            clientName: c.client_name
          }
        }
      } satisfies BearerOutcome
    })
  })
