/**
 * Our own sign-in and consent steps of the authorization server (oidc-provider hands a browser to
 * `/oauth/interaction/<uid>` when it needs a person): sign in with email and password (scrypt; the
 * same answer for an unknown email and a wrong password; rate-limited per email and per address),
 * then pick the operators (where the person is owner or admin) and scopes (read ticked, write off)
 * the connection gets. Consent creates the grant and its connection (./Connections.ts).
 *
 * CSRF: every form carries an HMAC of the interaction id under the shared cookie key, checked on
 * POST; the interaction itself is bound to the browser by oidc-provider's signed SameSite cookie.
 */
import { HttpServerRequest, HttpServerResponse, type UrlParams } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type Provider from "oidc-provider"
import { RateLimiter } from "../../http/RateLimiter.js"
import { isScope, type Scope, SCOPES } from "../../partner/auth/scopes.js"
import { Connections } from "./Connections.js"
import { OAuthStoreRepo } from "./OAuthStoreRepo.js"
import { type ClientShown, consentPage, isReadScope, messagePage, signInPage } from "./pages.js"
import { verifyPassword } from "./password.js"
import { INTERACTION_PREFIX } from "./provider.js"
import { SignInRepo } from "./SignInRepo.js"

/** Sign-in attempts allowed per email, and per client address, in SIGN_IN_WINDOW_SECONDS. */
export const SIGN_IN_ATTEMPTS_PER_EMAIL = 10
export const SIGN_IN_ATTEMPTS_PER_ADDRESS = 50
export const SIGN_IN_WINDOW_SECONDS = 15 * 60

const WRONG = "Wrong email or password."

const all = (params: UrlParams.UrlParams, name: string) =>
  params.filter(([key]) => key === name).map(([, value]) => value)
const one = (params: UrlParams.UrlParams, name: string) => all(params, name)[0] ?? ""

export const makeInteractions = (provider: Provider, resource: string) =>
  Effect.gen(function*() {
    const users = yield* SignInRepo
    const connections = yield* Connections
    const limiter = yield* RateLimiter
    const cookieKey = yield* (yield* OAuthStoreRepo).sharedSecret("oauth_cookies", () => randomBytes(32))

    const csrfFor = (uid: string) => createHmac("sha256", cookieKey).update(`interaction:${uid}`).digest("base64url")
    const csrfMatches = (uid: string, given: string) => {
      const expected = Buffer.from(csrfFor(uid))
      const got = Buffer.from(given)
      return got.length === expected.length && timingSafeEqual(got, expected)
    }

    const expired = messagePage(
      "This sign-in has expired",
      "Start again from your assistant: it will open a new sign-in page.",
      400
    )

    /** The interaction this browser is in (by its cookie), if it is the one in the URL. */
    const details = (request: HttpServerRequest.HttpServerRequest, uid: string) =>
      Effect.tryPromise(() =>
        provider.interactionDetails(
          NodeHttpServerRequest.toIncomingMessage(request),
          NodeHttpServerRequest.toServerResponse(request)
        )
      ).pipe(Effect.option, Effect.map(Option.filter((d) => d.uid === uid)))

    const clientOf = (clientId: string, redirectUri: unknown) =>
      Effect.promise(() => provider.Client.find(clientId)).pipe(
        Effect.map((client): ClientShown => {
          let redirectHost = "?"
          try {
            redirectHost = new URL(String(redirectUri)).host || String(redirectUri)
          } catch { /* shown as "?" */ }
          return { name: client?.clientName ?? clientId, redirectHost }
        })
      )

    const finish = (request: HttpServerRequest.HttpServerRequest, result: Record<string, unknown>) =>
      Effect.promise(() =>
        provider.interactionResult(
          NodeHttpServerRequest.toIncomingMessage(request),
          NodeHttpServerRequest.toServerResponse(request),
          result,
          { mergeWithLastSubmission: false }
        )
      ).pipe(Effect.map((to) => HttpServerResponse.redirect(to, { status: 303 })))

    const requestedScopes = (params: Record<string, unknown>) =>
      String(params.scope ?? "").split(" ").filter((s) => s !== "")

    const consentFor = (
      uid: string,
      userId: string,
      client: ClientShown,
      error?: string
    ) =>
      Effect.gen(function*() {
        const user = yield* users.userById(userId)
        const operators = yield* users.managedOperators(userId)
        // Read scopes ticked, write scopes off unless the person ticks them (as when creating a key).
        const ticked = new Set<string>(SCOPES.filter(isReadScope))
        return consentPage({
          uid,
          csrf: csrfFor(uid),
          client,
          userEmail: Option.match(user, { onNone: () => "", onSome: (u) => u.email }),
          operators,
          ticked,
          ...(error ? { error, status: 400 } : {})
        })
      })

    const show = (request: HttpServerRequest.HttpServerRequest, uid: string) =>
      Effect.gen(function*() {
        const found = yield* details(request, uid)
        if (Option.isNone(found)) return expired
        const d = found.value
        const client = yield* clientOf(String(d.params.client_id), d.params.redirect_uri)
        if (d.prompt.name === "login" || d.session?.accountId === undefined) {
          return signInPage({ uid, csrf: csrfFor(uid), client })
        }
        return yield* consentFor(uid, d.session.accountId, client)
      })

    const login = (request: HttpServerRequest.HttpServerRequest, uid: string, form: UrlParams.UrlParams) =>
      Effect.gen(function*() {
        const found = yield* details(request, uid)
        if (Option.isNone(found)) return expired
        const d = found.value
        const client = yield* clientOf(String(d.params.client_id), d.params.redirect_uri)
        const email = one(form, "email").trim().toLowerCase()
        const password = one(form, "password")
        if (!csrfMatches(uid, one(form, "csrf"))) {
          return messagePage("Refused", "This form was not sent from our sign-in page. Start again.", 403)
        }
        const address = request.remoteAddress.pipe(Option.getOrElse(() => "unknown"))
        const byEmail = yield* limiter.hit(`signin:${email}`, SIGN_IN_ATTEMPTS_PER_EMAIL, SIGN_IN_WINDOW_SECONDS)
        const byAddress = yield* limiter.hit(
          `signin-ip:${address}`,
          SIGN_IN_ATTEMPTS_PER_ADDRESS,
          SIGN_IN_WINDOW_SECONDS
        )
        if (!byEmail.allowed || !byAddress.allowed) {
          const wait = Math.max(
            byEmail.allowed ? 0 : byEmail.resetSeconds,
            byAddress.allowed ? 0 : byAddress.resetSeconds
          )
          return messagePage(
            "Too many attempts",
            `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minutes.`,
            429,
            { "Retry-After": String(wait) }
          )
        }
        const user = yield* users.userByEmail(email)
        const hash = Option.match(user, { onNone: () => null, onSome: (u) => u.password_hash })
        const ok = yield* Effect.promise(() => verifyPassword(password, hash))
        if (!ok || Option.isNone(user)) {
          return signInPage({ uid, csrf: csrfFor(uid), client, email, error: WRONG, status: 401 })
        }
        return yield* finish(request, { login: { accountId: user.value.id } })
      })

    const consent = (request: HttpServerRequest.HttpServerRequest, uid: string, form: UrlParams.UrlParams) =>
      Effect.gen(function*() {
        const found = yield* details(request, uid)
        if (Option.isNone(found)) return expired
        const d = found.value
        if (!csrfMatches(uid, one(form, "csrf"))) {
          return messagePage("Refused", "This form was not sent from our consent page. Start again.", 403)
        }
        const accountId = d.session?.accountId
        if (d.prompt.name !== "consent" || accountId === undefined) return expired
        const clientId = String(d.params.client_id)
        const client = yield* clientOf(clientId, d.params.redirect_uri)
        const managed = yield* users.managedOperators(accountId)
        const operatorIds = [...new Set(all(form, "operator"))]
        const scopes = [...new Set(all(form, "scope"))]
        if (operatorIds.length === 0 || operatorIds.some((id) => !managed.some((o) => o.id === id))) {
          return yield* consentFor(uid, accountId, client, "Pick at least one of your operators.")
        }
        if (scopes.length === 0 || !scopes.every(isScope)) {
          return yield* consentFor(uid, accountId, client, "Pick at least one permission.")
        }
        const grant = new provider.Grant({ accountId, clientId })
        grant.addResourceScope(resource, scopes.join(" "))
        const rejected = requestedScopes(d.params).filter((s) => isScope(s) && !scopes.includes(s))
        if (rejected.length > 0) grant.rejectResourceScope(resource, rejected.join(" "))
        const missingOidc = (d.prompt.details as { missingOIDCScope?: ReadonlyArray<string> }).missingOIDCScope
        // Asked-for scopes the person did not pick are recorded as refused (no second consent prompt);
        // what the connection may do is its key's scopes (enforced per tool), never the token's.
        const oidcGranted = (missingOidc ?? []).filter((s) => !isScope(s) || scopes.includes(s))
        const oidcRefused = (missingOidc ?? []).filter((s) => isScope(s) && !scopes.includes(s))
        if (oidcGranted.length > 0) grant.addOIDCScope(oidcGranted.join(" "))
        if (oidcRefused.length > 0) grant.rejectOIDCScope(oidcRefused.join(" "))
        const grantId = yield* Effect.promise(() => grant.save())
        yield* connections.create({
          grantId,
          userId: accountId,
          clientId,
          clientName: client.name,
          scopes: scopes as ReadonlyArray<Scope>,
          operatorIds
        })
        return yield* finish(request, { consent: { grantId } })
      })

    const abort = (request: HttpServerRequest.HttpServerRequest, uid: string, form: UrlParams.UrlParams) =>
      Effect.gen(function*() {
        const found = yield* details(request, uid)
        if (Option.isNone(found)) return expired
        if (!csrfMatches(uid, one(form, "csrf"))) {
          return messagePage("Refused", "This form was not sent from our sign-in page. Start again.", 403)
        }
        return yield* finish(request, {
          error: "access_denied",
          error_description: "the person did not allow the connection"
        })
      })

    /** Serves GET /oauth/interaction/<uid> and POST …/<uid>/(login|consent|abort); undefined for other paths. */
    return (request: HttpServerRequest.HttpServerRequest, path: string) => {
      const rest = path.slice(INTERACTION_PREFIX.length).split("/")
      const uid = rest[0] ?? ""
      const action = rest[1]
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(uid) || rest.length > 2) return undefined
      if (action === undefined) return request.method === "GET" ? show(request, uid) : undefined
      if (request.method !== "POST") return undefined
      const withForm = (
        f: (
          r: HttpServerRequest.HttpServerRequest,
          u: string,
          p: UrlParams.UrlParams
        ) => Effect.Effect<HttpServerResponse.HttpServerResponse>
      ) =>
        request.urlParamsBody.pipe(
          Effect.catchAll(() => Effect.succeed([] as UrlParams.UrlParams)),
          Effect.flatMap((form) => f(request, uid, form))
        )
      if (action === "login") return withForm(login)
      if (action === "consent") return withForm(consent)
      if (action === "abort") return withForm(abort)
      return undefined
    }
  })
