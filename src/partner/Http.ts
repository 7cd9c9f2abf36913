/**
 * The Partner API's handlers: each feature folder's `Http.ts` (its group, providing its own
 * services), `me` and the health probes here, and the key security every group but `tours` uses.
 * Handlers only decode (done by HttpApi), call a service and shape the answer; every request runs
 * to its end, even when its client hangs up (src/http/apiApp.ts).
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { apiHttpApp } from "../http/apiApp.js"
import { DocsRoutes } from "../http/docs/routes.js"
import { jsonBody } from "../http/json.js"
import { Readiness } from "../http/lifecycle/Readiness.js"
import { RateLimiter } from "../http/RateLimiter.js"
import { referencePageLayer } from "../http/referencePage.js"
import { AnalyticsLive } from "./analytics/Http.js"
import { Health, meOf, PartnerApi } from "./Api.js"
import { KeyAuth } from "./auth/KeyAuth.js"
import { PartnerAuthLive } from "./auth/middleware.js"
import { CurrentKey } from "./auth/security.js"
import { BookingsLive } from "./bookings/Http.js"
import { CancelsLive } from "./cancels/Http.js"
import { CheckinsLive } from "./checkins/Http.js"
import { CollectLive } from "./collect/Http.js"
import { ChargebacksLive } from "./finance/chargebacks/Http.js"
import { InvoiceFilesLive, InvoicesLive } from "./finance/invoices/Http.js"
import { PayLaterLive } from "./finance/payLater/Http.js"
import { PayoutsLive } from "./finance/payouts/Http.js"
import { StatementsLive } from "./finance/statements/Http.js"
import { ManifestLive } from "./manifest/Http.js"
import { openApiLayer, partnerOpenApi } from "./openapi.js"
import { PaymentLinksLive } from "./paymentLinks/Http.js"
import { answerProblems } from "./problem.js"
import { ReschedulesLive } from "./reschedules/Http.js"
import { SalesLive } from "./sales/Http.js"
import { ToursLive } from "./tours/Http.js"

export const MeLive = HttpApiBuilder.group(
  PartnerApi,
  "me",
  (handlers) => handlers.handle("me", () => Effect.map(CurrentKey, meOf))
)

export const HealthLive = HttpApiBuilder.group(PartnerApi, "health", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const readiness = yield* Readiness
    const unavailable = Effect.sync(() => HttpServerResponse.unsafeJson({ status: "unavailable" }, { status: 503 }))
    // The probe's answer, serialised once (src/http/json.ts): no schema pass per probe.
    const healthy = Effect.succeed(jsonBody(Health, { status: "ok" }))
    return handlers
      .handle("healthz", () => healthy)
      .handle("readyz", () =>
        // Draining (a shutdown began): 503 at once, so the load balancer sends no new work here.
        readiness.draining() ? unavailable : probe(sql, unavailable))
  }))

/** Whether the database answers. */
const probe = (sql: SqlClient.SqlClient, unavailable: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
  // The probe itself is never interrupted (src/http/apiApp.ts); past 2 s we answer without it
  // (the wait is interruptible inside the uninterruptible request, so the deadline can cut it).
  sql`SELECT 1`.pipe(
    Effect.uninterruptible,
    Effect.disconnect,
    Effect.interruptible,
    Effect.timeout("2 seconds"),
    Effect.as(jsonBody(Health, { status: "ok" })),
    Effect.catchAllCause(() => unavailable)
  )

/** The Partner API with every group implemented. */
export const PartnerApiLive = HttpApiBuilder.api(PartnerApi).pipe(
  Layer.provide([
    MeLive,
    HealthLive,
    BookingsLive,
    ManifestLive,
    CheckinsLive,
    ReschedulesLive,
    PaymentLinksLive,
    CancelsLive,
    ToursLive,
    SalesLive,
    CollectLive,
    AnalyticsLive,
    StatementsLive,
    PayLaterLive,
    PayoutsLive,
    ChargebacksLive,
    InvoicesLive,
    InvoiceFilesLive
  ]),
  Layer.provide(PartnerAuthLive),
  Layer.provide([KeyAuth.Default, RateLimiter.Default])
)

/**
 * The partner API as served: its routes, its OpenAPI document (/api/v1/openapi.json), the reference
 * page (/api/v1/docs) and the markdown docs, on a router of its own, with its problem+json mapping.
 */
export const PartnerHttp = apiHttpApp(
  Layer.mergeAll(openApiLayer, referencePageLayer("/api/v1/docs", PartnerApi, partnerOpenApi), DocsRoutes).pipe(
    Layer.provideMerge(PartnerApiLive)
  ),
  answerProblems
)
