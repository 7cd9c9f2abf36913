/** Partner API security declarations: the bearer middleware, the key it provides, required scopes. */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { Forbidden, RateLimited, Unauthorized } from "../../domain/errors.js"
import type { AuthenticatedKey } from "./KeyAuth.js"
import type { PublishableKey } from "./PublishableKeys.js"
import type { Scope } from "./scopes.js"

export class CurrentKey extends Context.Tag("Partner/CurrentKey")<CurrentKey, AuthenticatedKey>() {}

export class PartnerAuth extends HttpApiMiddleware.Tag<PartnerAuth>()("PartnerAuth", {
  failure: Schema.Union(Unauthorized, RateLimited, Forbidden),
  provides: CurrentKey,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A secret key: `Authorization: Bearer svc_live_<id>_<secret>`. Never put a key in the URL."
      )
    )
  }
}) {}

/** The scope an endpoint needs, declared with `.annotate(RequiredScope, "...")` on the endpoint or group. */
export class RequiredScope extends Context.Tag("Partner/RequiredScope")<RequiredScope, Scope>() {}

/** Who reads the catalogue: a secret key (tours:read) or a publishable key (its own site). */
export type CatalogueCaller =
  | { readonly _tag: "Secret"; readonly key: AuthenticatedKey }
  | { readonly _tag: "Publishable"; readonly key: PublishableKey }

export class CurrentCaller extends Context.Tag("Partner/CurrentCaller")<CurrentCaller, CatalogueCaller>() {}

export class CatalogueAuth extends HttpApiMiddleware.Tag<CatalogueAuth>()("CatalogueAuth", {
  failure: Schema.Union(Unauthorized, RateLimited, Forbidden),
  provides: CurrentCaller,
  security: {
    publishable: HttpApiSecurity.apiKey({ in: "query", key: "key" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A publishable key: `?key=pk_widget_<id>`, with no Authorization header. Public (safe in web pages); reads " +
          "only its own site's catalogue; browsers read the answers only from the key's allowed origins."
      )
    )
  }
}) {}

/** The operation accepts a secret key (bearer) or a publishable key (query `key`): either, not both. */
export const eitherKey = (operation: Record<string, unknown>) => ({
  ...operation,
  security: [{ bearer: [] }, { publishable: [] }]
})
