/**
 * Fault switches and the request log of the sandbox. Switches apply to the Bókun API only (never
 * to the /sandbox admin endpoints, so a test can always switch them back), either to every vendor
 * or to one vendor (matched by the access key the request carries; a vendor's own setting wins).
 *
 * - latencyMs: wait this long before answering;
 * - errorRate: share of calls (0..1) answered with errorStatus (500 or 503);
 * - hang: never answer (the client's timeout has to fire);
 * - down: close the connection without an answer.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import type { HttpApp } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Random, Ref } from "effect"
import { ACCESS_KEY_HEADER } from "../../adapters/bokun/signing.js"

export interface FaultSettings {
  readonly latencyMs: number
  readonly errorRate: number
  readonly errorStatus: 500 | 503
  readonly hang: boolean
  readonly down: boolean
}

/** The log keeps the latest calls only. */
const LOG_LIMIT = 10_000

export const NO_FAULTS: FaultSettings = { latencyMs: 0, errorRate: 0, errorStatus: 503, hang: false, down: false }

export interface FaultState {
  readonly all: FaultSettings
  /** By vendor access key. */
  readonly vendors: ReadonlyMap<string, FaultSettings>
}

export interface LoggedRequest {
  readonly method: string
  readonly path: string
  readonly accessKey: string | null
}

export interface RequestFilter {
  readonly method?: string
  /** Exact path, or a pattern tested against the path (no query string). */
  readonly path?: string | RegExp
  readonly accessKey?: string
}

const matches = (filter: RequestFilter) => (r: LoggedRequest) =>
  (filter.method === undefined || r.method === filter.method.toUpperCase()) &&
  (filter.path === undefined || (typeof filter.path === "string" ? r.path === filter.path : filter.path.test(r.path))) &&
  (filter.accessKey === undefined || r.accessKey === filter.accessKey)

export const makeFaults = Effect.gen(function*() {
  const state = yield* Ref.make<FaultState>({ all: NO_FAULTS, vendors: new Map() })
  const log = yield* Ref.make<ReadonlyArray<LoggedRequest>>([])

  const set = (settings: Partial<FaultSettings>, accessKey?: string) =>
    Ref.update(state, (s) => {
      if (accessKey === undefined) return { ...s, all: { ...s.all, ...settings } }
      const vendors = new Map(s.vendors)
      vendors.set(accessKey, { ...(s.vendors.get(accessKey) ?? NO_FAULTS), ...settings })
      return { ...s, vendors }
    })

  const effective = (accessKey: string | null) =>
    Ref.get(state).pipe(Effect.map((s) => (accessKey !== null ? s.vendors.get(accessKey) : undefined) ?? s.all))

  /** Applies the switches in front of the Bókun API and logs every call to it. */
  const middleware = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = request.originalUrl.split("?")[0]!
      if (path === "/sandbox" || path.startsWith("/sandbox/")) return yield* app
      const key = request.headers[ACCESS_KEY_HEADER]
      const accessKey = typeof key === "string" ? key : null
      yield* Ref.update(log, (entries) => [...entries.slice(-(LOG_LIMIT - 1)), { method: request.method, path, accessKey }])
      const faults = yield* effective(accessKey)
      if (faults.latencyMs > 0) yield* Effect.sleep(faults.latencyMs)
      if (faults.down) {
        NodeHttpServerRequest.toIncomingMessage(request).socket.destroy()
        return HttpServerResponse.empty({ status: 503 })
      }
      if (faults.hang) return yield* Effect.never
      if (faults.errorRate > 0 && (yield* Random.next) < faults.errorRate) {
        return HttpServerResponse.unsafeJson(
          { message: faults.errorStatus === 503 ? "Service Unavailable" : "Internal Server Error" },
          { status: faults.errorStatus }
        )
      }
      return yield* app
    })

  return {
    /** Switches faults on or off for every vendor, or for the vendor with this access key. */
    set,
    get: Ref.get(state),
    /** Every switch off, the request log emptied. */
    reset: Effect.zipRight(Ref.set(state, { all: NO_FAULTS, vendors: new Map() }), Ref.set(log, [])),
    requests: {
      list: Ref.get(log),
      count: (filter: RequestFilter = {}) => Effect.map(Ref.get(log), (entries) => entries.filter(matches(filter)).length),
      clear: Ref.set(log, [])
    },
    middleware
  }
})

export type Faults = Effect.Effect.Success<typeof makeFaults>
