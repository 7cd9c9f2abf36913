/**
 * Fault switches and a request log for any sandbox: the transport faults every stand-in needs
 * (latency, errors, a hang, a dead connection), set for all callers or for one caller (a scope such
 * as a Bókun access key or a Surfboard merchant id; a scope's own settings win over the global
 * ones). The admin endpoints (`/sandbox/*`) are never faulted or logged, so a test can always
 * switch a fault back off.
 *
 * - latencyMs: wait this long before answering;
 * - errorRate: share of calls (0..1) answered with errorStatus;
 * - hang: never answer (the client's timeout has to fire);
 * - down: close the connection without an answer.
 *
 * A sandbox may extend the settings with switches of its own (`S extends FaultSettings`) and read
 * them with `effective(scope)` wherever it needs them.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Random, Ref, Schema } from "effect"

export interface FaultSettings {
  readonly latencyMs: number
  readonly errorRate: number
  readonly errorStatus: 500 | 502 | 503 | 504
  readonly hang: boolean
  readonly down: boolean
}

export const NO_FAULTS: FaultSettings = { latencyMs: 0, errorRate: 0, errorStatus: 503, hang: false, down: false }

/** The shared switches as an admin endpoint's body fields (each sandbox adds its own). */
export const faultSwitchFields = <const S extends ReadonlyArray<number>>(...errorStatuses: S) => ({
  latencyMs: Schema.optional(Schema.Number.pipe(Schema.nonNegative())),
  errorRate: Schema.optional(Schema.Number.pipe(Schema.between(0, 1))),
  errorStatus: Schema.optional(Schema.Literal(...errorStatuses)),
  hang: Schema.optional(Schema.Boolean),
  down: Schema.optional(Schema.Boolean)
})

export interface FaultState<S extends FaultSettings = FaultSettings> {
  readonly all: S
  /** By scope (whatever the sandbox keys callers by). */
  readonly scoped: ReadonlyMap<string, S>
}

export interface LoggedRequest {
  readonly method: string
  /** The path without its query string. */
  readonly path: string
  readonly scope: string | null
}

export interface RequestFilter {
  readonly method?: string
  /** Exact path, or a pattern tested against the path (no query string). */
  readonly path?: string | RegExp
  readonly scope?: string
}

/** The log keeps the latest calls only. */
const LOG_LIMIT = 10_000

const matches = (filter: RequestFilter) => (r: LoggedRequest) =>
  (filter.method === undefined || r.method === filter.method.toUpperCase()) &&
  (filter.path === undefined ||
    (typeof filter.path === "string" ? r.path === filter.path : filter.path.test(r.path))) &&
  (filter.scope === undefined || r.scope === filter.scope)

export const isAdminPath = (path: string) => path === "/sandbox" || path.startsWith("/sandbox/")

export const pathOf = (request: HttpServerRequest.HttpServerRequest) => request.originalUrl.split("?")[0]!

/** Closes the request's connection without an answer. */
export const dropConnection = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => NodeHttpServerRequest.toIncomingMessage(request).socket.destroy())

/**
 * A sandbox's API answering each request to the end, even when its caller hangs up: a sandbox runs
 * in the service's process on the service's pool, and @effect/sql-pg 0.53 answers an interrupted
 * statement with pg_cancel_backend(pid), which can land on the next statement of that pooled
 * connection, another caller's (the service's own routes run uninterruptibly for the same reason:
 * src/http/apiApp.ts). A client that gives up on a slow sandbox call (its timeout) then cancelled a
 * later read of the service (a 500 seen once in CI, test/catalogue/tourFacts.test.ts). The fault
 * switches stay outside, so a `hang` still ends with its caller.
 */
export const answeredToTheEnd = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> => Effect.uninterruptible(app)

export interface FaultsOptions<S extends FaultSettings> {
  /** Every switch off. */
  readonly defaults: S
  /** Which caller a request comes from (null: unknown, only the global settings apply). */
  readonly scopeOf: (request: HttpServerRequest.HttpServerRequest) => string | null
  /** The body of a forced error answer. */
  readonly errorBody?: (status: number) => unknown
  /** Requests neither faulted nor logged; default: the /sandbox admin endpoints. */
  readonly exempt?: (path: string) => boolean
}

export const makeFaults = <S extends FaultSettings>(options: FaultsOptions<S>) =>
  Effect.gen(function*() {
    const exempt = options.exempt ?? isAdminPath
    const errorBody = options.errorBody ?? ((status: number) => ({
      message: status === 503 ? "Service Unavailable" : "Internal Server Error"
    }))
    const state = yield* Ref.make<FaultState<S>>({ all: options.defaults, scoped: new Map() })
    // Appended in place and trimmed in batches: copying the whole log on every call cost each
    // sandbox request O(LOG_LIMIT) (noticed in bench:changes).
    let log: Array<LoggedRequest> = []
    const latest = Effect.sync((): ReadonlyArray<LoggedRequest> => log.slice(-LOG_LIMIT))
    const clear = Effect.sync(() => {
      log = []
    })

    /** Merges switches for every caller, or for one scope. */
    const set = (settings: Partial<S>, scope?: string) =>
      Ref.update(state, (s) => {
        if (scope === undefined) return { ...s, all: { ...s.all, ...settings } }
        const scoped = new Map(s.scoped)
        scoped.set(scope, { ...(s.scoped.get(scope) ?? options.defaults), ...settings })
        return { ...s, scoped }
      })

    /** The settings that apply to a scope. */
    const effective = (scope: string | null) =>
      Ref.get(state).pipe(Effect.map((s) => (scope !== null ? s.scoped.get(scope) : undefined) ?? s.all))

    /** Applies the transport switches in front of the sandbox's API and logs every call to it. */
    const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const path = pathOf(request)
        if (exempt(path)) return yield* app
        const scope = options.scopeOf(request)
        log.push({ method: request.method, path, scope })
        if (log.length >= 2 * LOG_LIMIT) log = log.slice(-LOG_LIMIT)
        const faults = yield* effective(scope)
        if (faults.latencyMs > 0) yield* Effect.sleep(faults.latencyMs)
        if (faults.down) {
          yield* dropConnection(request)
          return HttpServerResponse.empty({ status: 503 })
        }
        if (faults.hang) return yield* Effect.never
        if (faults.errorRate > 0 && (yield* Random.next) < faults.errorRate) {
          return HttpServerResponse.unsafeJson(errorBody(faults.errorStatus), { status: faults.errorStatus })
        }
        return yield* app
      })

    return {
      set,
      get: Ref.get(state),
      effective,
      /** Every switch off, the request log emptied. */
      reset: Effect.zipRight(Ref.set(state, { all: options.defaults, scoped: new Map() }), clear),
      requests: {
        list: latest,
        count: (filter: RequestFilter = {}) => Effect.map(latest, (entries) => entries.filter(matches(filter)).length),
        clear
      },
      middleware
    }
  })

export type Faults<S extends FaultSettings = FaultSettings> = Effect.Effect.Success<ReturnType<typeof makeFaults<S>>>
