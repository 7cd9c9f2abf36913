/**
 * The authorization server of the assistant-facing MCP server (issue 16): oidc-provider (certified,
 * well kept) configured for OAuth 2.1 as the MCP authorization spec asks: authorization code with
 * PKCE S256 only, exact redirect URIs, dynamic client registration (RFC 7591) and client ID metadata
 * documents, refresh tokens that rotate (a reused one revokes its grant: the whole family),
 * revocation (RFC 7009), the `iss` response parameter (RFC 9207), and resource indicators
 * (RFC 8707): access tokens only for the MCP resource, opaque, looked up on every call.
 *
 * Its storage is PostgreSQL (./adapter.ts, hashes of ids only); its cookie keys and signing key are
 * the service's shared secrets (service_secrets), so every instance answers alike. Sign-in and
 * consent are our own pages (./interactions.ts).
 */
import { Effect } from "effect"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import Provider, { type Configuration, errors, interactionPolicy, type KoaContextWithOIDC } from "oidc-provider"
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachableError } from "../../db/unreachable.js"
import { HTML_SECURITY_HEADERS, inlineScriptHashes, pageCsp } from "../../http/securityHeaders.js"
import { SCOPES } from "../../partner/auth/scopes.js"
import { makeAdapter } from "./adapter.js"
import { OAuthStoreRepo } from "./OAuthStoreRepo.js"
import { escapeHtml } from "./pages.js"

/** Where the provider's endpoints live (the issuer is the service's base URL). */
export const OAUTH_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  jwks: "/oauth/jwks",
  end_session: "/oauth/session/end",
  userinfo: "/oauth/userinfo",
  introspection: "/oauth/introspect",
  pushed_authorization_request: "/oauth/par",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
  credential: "/oauth/credential"
} as const

export const INTERACTION_PREFIX = "/oauth/interaction/"

export const ACCESS_TOKEN_SECONDS = 60 * 60
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 60 * 60

export interface ProviderSettings {
  /** The issuer: the service's public base URL. */
  readonly issuer: string
  /** The MCP resource (RFC 8707): the only audience tokens are issued for. */
  readonly resource: string
  /**
   * Whether a grant has its connection (made on our consent page) and it still acts (not revoked,
   * an operator left): else the person is asked again and a new connection is made.
   */
  readonly hasActiveConnection: (grantId: string) => Promise<boolean>
}

/**
 * oidc-provider's prompts, plus one: consent is asked until the grant has an active connection, even
 * when the client asked for no scope (the person always picks operators and scopes on our page).
 */
const policyFor = (hasActiveConnection: ProviderSettings["hasActiveConnection"]) => {
  const policy = interactionPolicy.base()
  policy.get("consent")!.checks.add(
    new interactionPolicy.Check(
      "connection_missing",
      "the person has not yet picked what this connection may do",
      async (ctx) => {
        const grantId = ctx.oidc.grant?.jti
        return grantId === undefined || !(await hasActiveConnection(grantId))
          ? interactionPolicy.Check.REQUEST_PROMPT
          : interactionPolicy.Check.NO_NEED_TO_PROMPT
      }
    )
  )
  return policy
}

export const makeProvider = (settings: ProviderSettings) =>
  Effect.gen(function*() {
    const store = yield* OAuthStoreRepo
    const cookieKey = yield* store.sharedSecret("oauth_cookies", () => randomBytes(32))
    const jwk = yield* store.sharedSecret("oauth_signing_jwk", () =>
      Buffer.from(JSON.stringify(
        generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
      )))
    const adapter = yield* makeAdapter

    const resourceServer = {
      scope: SCOPES.join(" "),
      audience: settings.resource,
      accessTokenFormat: "opaque",
      accessTokenTTL: ACCESS_TOKEN_SECONDS
    } as const

    const configuration: Configuration = {
      adapter,
      clients: [],
      cookies: {
        keys: [Buffer.from(cookieKey).toString("base64url")],
        long: { signed: true, sameSite: "lax", httpOnly: true },
        short: { signed: true, sameSite: "lax", httpOnly: true }
      },
      jwks: { keys: [JSON.parse(Buffer.from(jwk).toString("utf8"))] },
      routes: OAUTH_ROUTES,
      responseTypes: ["code"],
      // Our scopes are known here too: MCP clients register with the resource's `scopes_supported`.
      scopes: ["openid", "offline_access", ...SCOPES],
      pkce: { required: () => true },
      clientDefaults: {
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        // The signing key is P-256 (ids tokens are signed only when a client asks for `openid`).
        id_token_signed_response_alg: "ES256"
      },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        revocation: { enabled: true },
        userinfo: { enabled: false },
        clientIdMetadataDocument: { enabled: true, ack: "draft-02" },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => settings.resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (indicator !== settings.resource) {
              throw new errors.InvalidTarget("tokens are issued only for the MCP server")
            }
            return resourceServer
          }
        }
      } as Configuration["features"],
      interactions: {
        url: (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}`,
        policy: policyFor(settings.hasActiveConnection)
      },
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      // Connections outlive the browser session they were made in; they end when revoked.
      expiresWithSession: () => false,
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: ACCESS_TOKEN_SECONDS,
        AuthorizationCode: 60,
        RefreshToken: REFRESH_TOKEN_SECONDS,
        Interaction: 60 * 60,
        Session: 24 * 60 * 60,
        Grant: REFRESH_TOKEN_SECONDS
      },
      renderError: (ctx: KoaContextWithOIDC, out, error) => {
        ctx.type = "html"
        ctx.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
        if (isDatabaseUnreachableError(error)) {
          // The database did not answer (src/db/unreachable.ts): a 503 page, not the provider's 500.
          ctx.status = 503
          ctx.set("Retry-After", String(DATABASE_RETRY_AFTER_SECONDS))
          ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable` +
            `</title></head><body><h1>Temporarily unavailable</h1><p>The service cannot sign you in right now. ` +
            `Try again in a moment.</p></body></html>`
          return
        }
        ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in error</title></head>` +
          `<body><h1>Something went wrong</h1><p>${escapeHtml(String(out.error ?? "error"))}: ${
            escapeHtml(String(out.error_description ?? ""))
          }</p></body></html>`
      }
    }
    const provider = new Provider(settings.issuer, configuration)
    // A client that asks for no scope is asking for the connection as the person picks it: request
    // every scope of ours (the consent page decides; what is not picked is recorded as refused).
    provider.use(async (ctx, next) => {
      if (ctx.path === OAUTH_ROUTES.authorization && ctx.method === "GET" && !ctx.query.scope) {
        ctx.query = { ...ctx.query, scope: SCOPES.join(" ") }
      }
      await next()
    })
    // The provider's own pages (errors, sign-out) get the headers of every HTML page (src/http/securityHeaders.ts).
    // Set before the route runs: its error page (renderError, which sets its own CSP) is written outside this.
    provider.use(async (ctx, next) => {
      ctx.set(HTML_SECURITY_HEADERS)
      await next()
      if (ctx.response.is("html") && ctx.response.get("Content-Security-Policy") === "") {
        ctx.set("Content-Security-Policy", pageCsp(inlineScriptHashes(typeof ctx.body === "string" ? ctx.body : "")))
      }
    })
    // Behind TLS termination the service sees http; trust X-Forwarded-Proto when the issuer is https.
    if (settings.issuer.startsWith("https:")) provider.proxy = true
    return provider
  })
