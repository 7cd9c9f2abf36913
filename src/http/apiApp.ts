/**
 * One HTTP API served as an HttpApp of its own, with what every API does around its routes: the
 * request id (`X-Request-Id`, taken from the request when well formed), the per-request headers
 * (./requestContext.ts), request bodies read by ./requestBody.ts, 405 for a known path asked with
 * another method (./routing.ts), the access log, and the API's own error mapping, which turns
 * every failure into that API's error body (src/partner/problem.ts, src/quickbook/errorMapping.ts).
 *
 * HttpApiBuilder keeps an API's routes and its middleware in two services (HttpApiBuilder.Router,
 * HttpApiBuilder.Middleware) that every layer built together shares. `apiHttpApp` therefore builds
 * each API's layer on its own (`Layer.build`: a build with its own memo map), so each API has its own
 * router, and src/Http.ts mounts the apps by path. What the layer needs from outside (SqlClient, the
 * ports, the Outbox) is shared; a service the layer builds itself (`X.Default`) is one instance per
 * API, which is right only for services that keep their state in PostgreSQL, as all of them do today
 * (an in-memory one both APIs must share belongs outside, like the Outbox).
 */
import {
  type HttpApi,
  HttpApiBuilder,
  type HttpApp,
  HttpRouter,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { Chunk, Context, Effect, FiberRef, HashMap, Layer, LogLevel, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { recordRequestNow } from "../observability/metrics.js"
import { decodedUrl, urlCarriesSecretKey } from "../partner/auth/apiKey.js"
import { isQuickbookUrl } from "../quickbook/schemas.js"
import { refailBodyRejections, withJsonBody } from "./requestBody.js"
import { CurrentRequest } from "./requestContext.js"
import { refailWrongMethod, routeMatcher } from "./routing.js"

/**
 * An API's error mapping: runs the API's routes for one request (`app`, which may fail with a
 * domain error, a body refusal, MethodNotAllowed, RouteNotFound, or die) and answers every failure
 * in the API's own form. Only an interruption may remain (hence the `unknown` error type).
 */
export interface ErrorMapping {
  <R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>,
    request: HttpServerRequest.HttpServerRequest,
    requestId: string
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>
}

/** Node refuses request heads over 16 KiB (answered 400: ./lifecycle/oversizedHead.ts), so no path parameter is longer. */
const MAX_PATH_PARAM_LENGTH = 16 * 1024

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,64}$/

/** The URL as logged: anything that looks like a secret key is replaced, so logs never hold one. */
export const loggableUrl = (url: string) =>
  urlCarriesSecretKey(url) ? decodedUrl(url).replace(/svc(qb)?_(live|test)_[A-Za-z0-9_]*/gi, "[redacted]") : url

/**
 * The middleware every API puts around its routes (see the module comment). `router` is the API's
 * router, asked for its routes when a path has none for the method.
 */
export const apiMiddleware = (
  router: { readonly router: Effect.Effect<HttpRouter.HttpRouter<unknown, unknown>> },
  errors: ErrorMapping
) =>
<E, R>(inner: HttpApp.Default<E, R>): HttpApp.Default<unknown, R> => {
  let routes: ReadonlyArray<HttpRouter.Route<unknown, unknown>> | undefined
  const routeOf = routeMatcher(() => routes ?? [])
  // The route templates for the request metric, read from the router when first needed.
  const readRoutes = Effect.map(router.router, (current) => {
    routes = Chunk.toReadonlyArray(current.routes)
  })
  const checked = inner.pipe(refailBodyRejections, refailWrongMethod(router))
  // Few effect steps per request: the request's own state is read and set on its fiber directly (no
  // Effect.gen, no Effect.locally: bench/README.md, "Issue 18: the framework's overhead").
  const serve = Effect.withFiberRuntime<
    HttpServerResponse.HttpServerResponse,
    unknown,
    R | HttpServerRequest.HttpServerRequest
  >((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const given = request.headers["x-request-id"]
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID()
    const ctx = { requestId, headers: {} as Record<string, string> }
    // Bodies read by ./requestBody.ts, a known path with another method is 405. (The platform
    // types the app's failures as never; the API's error mapping answers whatever fails.)
    const bodied = withJsonBody(request)
    // A request without a body is served as it came (no copy of the fiber's context for it).
    const app = bodied === request
      ? checked
      : Effect.provideService(checked, HttpServerRequest.HttpServerRequest, bodied)
    const started = performance.now()
    // Every request runs to its end, even when its client hangs up: @effect/sql-pg 0.53 answers an
    // interrupted statement with pg_cancel_backend(pid), which can land on the next statement of that
    // pooled connection, another caller's (a 500 for them; seen in the benchmark, docs/decisions.md).
    // The answer of a request whose client left is simply not delivered. Deadlines on outside systems
    // stay able to cut a call that hangs (src/adapters/jsonHttp.ts, src/catalogue/readDepartures.ts).
    const answered = Effect.flatMap(Effect.uninterruptible(errors(app, request, requestId)), (response) => {
      const ms = performance.now() - started
      recordRequestNow({
        api: isQuickbookUrl(request.url) ? "quickbook" : "partner",
        method: request.method,
        route: routeOf(request.method, request.url),
        status: response.status
      }, ms / 1000)
      const answer = HttpServerResponse.setHeaders(response, {
        ...ctx.headers,
        "X-Request-Id": requestId,
        // The rest of a body over the limit is not read: close the connection rather than drain it.
        ...(response.status === 413 ? { Connection: "close" } : {})
      })
      // The access log line; its fields (a URL redaction among them) are built only when Info is logged.
      if (!LogLevel.greaterThanEqual(LogLevel.Info, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) {
        return Effect.succeed(answer)
      }
      return Effect.as(
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            request_id: requestId,
            method: request.method,
            url: loggableUrl(request.url),
            status: response.status,
            ms: Math.round(ms)
          })
        ),
        answer
      )
    })
    // The request id for every log line and for the code deeper down (CurrentRequest). Every request
    // runs on a fiber of its own (the HTTP server forks one per request), so both are set on it rather
    // than scoped with Effect.locally (a copy of the fiber's references and an acquire/release each):
    // what runs on this fiber after the answer is only the sending of the answer.
    const annotated = Effect.zipRight(
      FiberRef.set(CurrentRequest, ctx),
      Effect.zipRight(
        FiberRef.set(
          FiberRef.currentLogAnnotations,
          HashMap.set(fiber.getFiberRef(FiberRef.currentLogAnnotations), "request_id", requestId)
        ),
        answered
      )
    )
    return fiber.getFiberRef(FiberRef.currentTracerEnabled)
      ? Effect.zipRight(Effect.annotateCurrentSpan({ request_id: requestId }), annotated)
      : annotated
  })
  return Effect.suspend(() => routes === undefined ? Effect.zipRight(readRoutes, serve) : serve)
}

/**
 * Builds `layer` (an HttpApi with its groups, and whatever else it puts on its router: documents,
 * reference pages) on its own, and returns it as an HttpApp with `apiMiddleware` around its routes.
 * The layer's services live as long as the calling scope.
 */
export const apiHttpApp = <E, R>(
  layer: Layer.Layer<HttpApi.Api, E, R>,
  errors: ErrorMapping
): Effect.Effect<HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>, E, R | Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      Layer.mergeAll(layer, HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)
    )
    return yield* Effect.gen(function*() {
      const router = yield* HttpApiBuilder.Router
      const middleware = yield* HttpApiBuilder.Middleware
      yield* middleware.add(apiMiddleware(router, errors))
      // The router's default refuses a path parameter over 100 characters as "no route" (404 "no such
      // endpoint"); the parameter's own schema answers it instead (a UUID: 400, a sale reference: 404).
      return yield* HttpRouter.withRouterConfig(HttpApiBuilder.httpApp, { maxParamLength: MAX_PATH_PARAM_LENGTH })
    }).pipe(Effect.provide(context))
  })
