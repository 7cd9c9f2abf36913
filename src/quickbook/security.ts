/** Quickbook API security declarations: the bearer + terminal middleware, what it provides, budgets. */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { QbBadRequest, QbForbidden, QbRateLimited, QbUnauthorized } from "./errors.js"
import type { QuickbookBudget } from "./limits.js"
import type { QuickbookCaller } from "./terminals/QuickbookKeys.js"

export class CurrentTerminal extends Context.Tag("Quickbook/CurrentTerminal")<CurrentTerminal, QuickbookCaller>() {}

/**
 * Bearer key + terminal header. Its failures (400, 401, 403, 429) are declared here once for every
 * endpoint behind it (they reach the handlers' error type and the OpenAPI document from here), so
 * an endpoint need not repeat them.
 */
export class QuickbookAuth extends HttpApiMiddleware.Tag<QuickbookAuth>()("QuickbookAuth", {
  failure: Schema.Union(QbUnauthorized, QbBadRequest, QbForbidden, QbRateLimited),
  provides: CurrentTerminal,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A quickbook key: `Authorization: Bearer svcqb_live_<id>_<secret>` (test keys `svcqb_test_...`), together with " +
          "the header `Quickbook-Terminal: <terminal id>` naming a terminal the key is bound to. Never put a key in the URL."
      )
    )
  }
}) {}

/** The rate-limit budget of an endpoint, declared with `.annotate(Budget, "reads")`. */
export class Budget extends Context.Tag("Quickbook/Budget")<Budget, QuickbookBudget>() {}
