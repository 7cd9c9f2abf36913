/** Partner API security declarations: the bearer middleware, the key it provides, required scopes. */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { Forbidden, RateLimited, Unauthorized } from "../../domain/errors.js"
import type { Scope } from "../../domain/scopes.js"
import type { AuthenticatedKey } from "../../services/KeyAuth.js"

export class CurrentKey extends Context.Tag("CurrentKey")<CurrentKey, AuthenticatedKey>() {}

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
export class RequiredScope extends Context.Tag("RequiredScope")<RequiredScope, Scope>() {}
