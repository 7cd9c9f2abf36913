/**
 * The MCP endpoint as a protected resource (MCP authorization spec, RFC 9728, RFC 6750): the bearer
 * token is an opaque access token of our authorization server, issued for this resource only
 * (RFC 8707); it leads to its grant, the grant to its connection, the connection to its key
 * (KeyAuth's `connectionKey`: revoked, or no picked operator left where the person is owner or
 * admin, is 401), all read in one statement on every call (BearerRepo) and the token checked by
 * the provider's own `AccessToken.find` on that row (its verdict remembered for that exact entry). A refusal answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"`.
 */
import { Effect, Option } from "effect"
import type Provider from "oidc-provider"
import { isDatabaseUnreachableError } from "../../db/unreachable.js"
import { connectionKey } from "../../partner/auth/KeyAuth.js"
import { withReadAccessToken } from "../oauth/adapter.js"
import { BearerRepo, type BearerRow } from "./BearerRepo.js"
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

/** What the provider's own check of a token's stored entry gives back (the fields used here). */
interface Verdict {
  readonly aud: string | ReadonlyArray<string> | undefined
  readonly clientId: string | undefined
  readonly exp: number | undefined
}

/** Most verdicts kept (the oldest are dropped first): a bound on memory, not on correctness. */
const MAX_VERDICTS = 10_000

/**
 * The provider's verdict on a token's stored entry, remembered for that exact entry (its payload as
 * stored, compared on every call) until the token expires. It saves the provider's model work per
 * call, not the read: the entry, its connection and its key are still read on every call (BearerRepo),
 * so a revoked or expired token, a revoked connection or key, a demoted person or a taken scope is
 * refused on the very next call as before (test/assistant/mcp.test.ts).
 */
const makeVerdicts = () => {
  const verdicts = new Map<string, { readonly entry: string; readonly verdict: Verdict }>()
  return {
    get: (token: string, entry: string) => {
      const kept = verdicts.get(token)
      if (kept === undefined) return undefined
      if (kept.entry !== entry || isExpired(kept.verdict)) {
        verdicts.delete(token)
        return undefined
      }
      return kept.verdict
    },
    set: (token: string, entry: string, verdict: Verdict) => {
      if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!)
      verdicts.set(token, { entry, verdict })
    }
  }
}

/** As oidc-provider's `isExpired` (`exp <= now`, in seconds). */
const isExpired = (verdict: Verdict) => verdict.exp !== undefined && verdict.exp <= Math.floor(Date.now() / 1000)

export const makeBearerAuth = (provider: Provider, resource: string) =>
  Effect.gen(function*() {
    const repo = yield* BearerRepo
    const verdicts = makeVerdicts()

    /** The provider's own checks of the entry (format, expiry), on the row just read; remembered per entry. */
    const verify = (token: string, read: Option.Option<BearerRow>) => {
      if (Option.isNone(read)) return Effect.succeed(undefined)
      const row = read.value.token
      const entry = JSON.stringify([row.payload, row.consumed_at])
      const kept = verdicts.get(token, entry)
      if (kept !== undefined) return Effect.succeed(kept)
      // A token that does not parse is not valid; a database that does not answer is a defect (503), never a
      // 401 that would make the assistant drop a good token.
      return Effect.promise(() =>
        withReadAccessToken(token, Option.some(row), () => provider.AccessToken.find(token)).then(
          (found): Verdict | undefined => {
            if (found === undefined) return undefined
            const verdict: Verdict = { aud: found.aud, clientId: found.clientId, exp: found.exp }
            if (!isExpired(verdict)) verdicts.set(token, entry, verdict)
            return verdict
          },
          (error: unknown) => {
            if (isDatabaseUnreachableError(error)) throw error
            return undefined
          }
        )
      )
    }

    return Effect.fn("McpAuth.authenticate")(function*(authorization: string | undefined) {
      if (authorization === undefined || authorization === "") return refused(undefined, "send an access token")
      const token = BEARER.exec(authorization)?.[1]
      if (token === undefined) return refused("invalid_request", "use the Bearer scheme")
      // One statement: the token's entry, its connection and the connection's key as it acts right now.
      const read = yield* repo.byAccessToken(token)
      const found = yield* verify(token, read)
      if (found === undefined || isExpired(found) || Option.isNone(read)) {
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
