/**
 * The assistant's real OAuth flow over HTTP, with the official MCP client
 * (`@modelcontextprotocol/client`): the client discovers the protected resource and the
 * authorization server, registers itself (RFC 7591), starts the authorization with PKCE; a person
 * signs in and consents by posting the HTML forms (a cookie jar, no browser); the client exchanges
 * the code (checking `iss`) and connects. Plain web code (fetch, no Effect, no database): the tests
 * use it through ./assistant.ts, and the MCP conformance run (.ci/conformance/token.ts) takes its
 * bearer token from it.
 */
import {
  Client,
  type ClientOptions,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError
} from "@modelcontextprotocol/client"

export const REDIRECT_URL = "http://127.0.0.1:9/callback"

/** A public client's registration (RFC 7591) as assistants send it: code + refresh, PKCE, no secret. */
export const publicClientMetadata = (name: string, redirectUri = REDIRECT_URL): OAuthClientMetadata => ({
  client_name: name,
  redirect_uris: [redirectUri],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none"
})

/** Registers a public client at `{base}/oauth/register`; the raw answer (tests check its status). */
export const registerPublicClient = (base: string, name: string, redirectUri = REDIRECT_URL) =>
  fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(publicClientMetadata(name, redirectUri))
  })

/** A test client's OAuth state, in memory. */
export class TestOAuthProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined
  saved: OAuthTokens | undefined
  verifier = ""
  authorizationUrl: URL | undefined
  constructor(readonly name = "Test Assistant") {}
  get redirectUrl() {
    return REDIRECT_URL
  }
  get clientMetadata(): OAuthClientMetadata {
    return publicClientMetadata(this.name)
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  discovery: OAuthDiscoveryState | undefined
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state
  }
  discoveryState() {
    return this.discovery
  }
}

/** Cookies by name, as a browser would keep them for one host (paths ignored: one flow at a time). */
export class CookieJar {
  readonly cookies = new Map<string, string>()
  take(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";")
      const eq = pair!.indexOf("=")
      const name = pair!.slice(0, eq).trim()
      const value = pair!.slice(eq + 1).trim()
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === "") this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  }
}

export interface Person {
  readonly email: string
  readonly password: string
  /** Operators to tick on the consent page (default: every one offered). */
  readonly operatorIds?: ReadonlyArray<string>
  /** Scopes to tick (default: what the page ticks, the read scopes). */
  readonly scopes?: ReadonlyArray<string>
}

export interface Page {
  readonly status: number
  readonly headers: Headers
  readonly html: string
  readonly url: string
}

/** A browser request: cookies kept, redirects followed until the client's redirect URI or a page. */
export const browse = async (jar: CookieJar, url: string, init: { method?: string; form?: URLSearchParams } = {}) => {
  let current = url
  let method = init.method ?? "GET"
  let body: string | undefined = init.form?.toString()
  for (let hop = 0; hop < 10; hop++) {
    if (current.startsWith(REDIRECT_URL)) return { status: 302, headers: new Headers(), html: "", url: current }
    const res = await fetch(current, {
      method,
      redirect: "manual",
      headers: {
        cookie: jar.header(),
        ...(body !== undefined ? { "content-type": "application/x-www-form-urlencoded" } : {})
      },
      ...(body !== undefined ? { body } : {})
    })
    jar.take(res)
    const location = res.headers.get("location")
    if (res.status >= 300 && res.status < 400 && location) {
      current = new URL(location, current).toString()
      method = "GET"
      body = undefined
      continue
    }
    return { status: res.status, headers: res.headers, html: await res.text(), url: current }
  }
  throw new Error("too many redirects")
}

/** The hidden CSRF field and the form actions of a page. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? ""
export const actionOf = (html: string, ending: string) => new RegExp(`action="([^"]*/${ending})"`).exec(html)?.[1] ?? ""
export const checkedValues = (html: string, name: string) =>
  [...html.matchAll(new RegExp(`name="${name}" value="([^"]+)" checked`, "g"))].map((m) => m[1]!)

/**
 * Signs in and consents in a "browser" from the authorization URL; answers the page where it
 * stopped, or the client's redirect with `code`, `state` and `iss`.
 */
export const signInAndConsent = async (authorizationUrl: URL, person: Person, jar = new CookieJar()) => {
  const base = authorizationUrl.origin
  const signIn = await browse(jar, authorizationUrl.toString())
  if (signIn.status !== 200 || !signIn.html.includes("/login")) return { stoppedAt: signIn, jar }
  const afterLogin = await browse(jar, base + actionOf(signIn.html, "login"), {
    method: "POST",
    form: new URLSearchParams({ csrf: csrfOf(signIn.html), email: person.email, password: person.password })
  })
  if (afterLogin.status !== 200 || !afterLogin.html.includes("/consent")) return { stoppedAt: afterLogin, jar }
  const form = new URLSearchParams({ csrf: csrfOf(afterLogin.html) })
  for (const id of person.operatorIds ?? checkedValues(afterLogin.html, "operator")) form.append("operator", id)
  for (const scope of person.scopes ?? checkedValues(afterLogin.html, "scope")) form.append("scope", scope)
  const done = await browse(jar, base + actionOf(afterLogin.html, "consent"), { method: "POST", form })
  return { stoppedAt: done, jar }
}

export interface ConnectedAssistant {
  readonly client: Client
  readonly provider: TestOAuthProvider
  readonly tokens: OAuthTokens
  readonly clientId: string
  readonly mcpUrl: URL
  readonly close: () => Promise<void>
}

/**
 * The whole flow: the official client meets a 401, discovers, registers and starts the
 * authorization; the person signs in and consents; the client takes the code and connects.
 */
export const connectAssistantAsync = async (
  base: string,
  person: Person,
  options: ClientOptions = {}
): Promise<ConnectedAssistant> => {
  const mcpUrl = new URL(`${base}/mcp`)
  const provider = new TestOAuthProvider()
  const first = new Client({ name: "test-assistant", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })
  try {
    await first.connect(transport)
    throw new Error("connected without signing in")
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error
  }
  if (!provider.authorizationUrl) throw new Error("the client did not start an authorization")
  const { stoppedAt } = await signInAndConsent(provider.authorizationUrl, person)
  if (!stoppedAt.url.startsWith(REDIRECT_URL)) {
    throw new Error(`the flow stopped at ${stoppedAt.url} (${stoppedAt.status}): ${stoppedAt.html.slice(0, 500)}`)
  }
  await transport.finishAuth(new URL(stoppedAt.url).searchParams)
  await first.close().catch(() => undefined)
  const client = new Client({ name: "test-assistant", version: "1.0.0" }, options)
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }))
  return {
    client,
    provider,
    tokens: provider.saved!,
    clientId: provider.info!.client_id,
    mcpUrl,
    close: () => client.close()
  }
}
