/**
 * The Bókun sandbox's fault switches and request log: the shared machinery (../faults.ts) scoped by
 * the access key a request carries, so a switch can apply to every vendor or to one vendor (a
 * vendor's own setting wins over the global ones). Switches apply to the Bókun API only, never to
 * the /sandbox admin endpoints.
 *
 * - latencyMs: wait this long before answering;
 * - errorRate: share of calls (0..1) answered with errorStatus;
 * - hang: never answer (the client's timeout has to fire);
 * - down: close the connection without an answer;
 * - rejectPhone: a booking or customer update that carries a phone number is refused (400
 *   `INVALID_PHONE_NUMBER`), as Bókun does for a number it cannot use;
 * - refuseBookings: the vendor refuses new bookings and confirmations (400 `NOT_ALLOWED`); holds
 *   and reads still work.
 * - failCreationSearch: a booking search by creation (`creationDateRange`) answers 503; every other
 *   call still works (the demo's account whose sales ledger cannot be read).
 */
import { Effect } from "effect"
import { ACCESS_KEY_HEADER } from "../../adapters/bokun/signing.js"
import * as Shared from "../faults.js"

export interface FaultSettings extends Shared.FaultSettings {
  readonly rejectPhone: boolean
  readonly refuseBookings: boolean
  readonly failCreationSearch: boolean
}
export const NO_FAULTS: FaultSettings = {
  ...Shared.NO_FAULTS,
  rejectPhone: false,
  refuseBookings: false,
  failCreationSearch: false
}

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

export const makeFaults = Effect.map(
  Shared.makeFaults<FaultSettings>({
    defaults: NO_FAULTS,
    scopeOf: (request) => {
      const key = request.headers[ACCESS_KEY_HEADER]
      return typeof key === "string" ? key : null
    }
  }),
  (faults) => ({
    /** Switches faults on or off for every vendor, or for the vendor with this access key. */
    set: (settings: Partial<FaultSettings>, accessKey?: string) => faults.set(settings, accessKey),
    get: Effect.map(faults.get, (s): FaultState => ({ all: s.all, vendors: s.scoped })),
    /** The switches that apply to the vendor with this access key (null: the global ones). */
    effective: faults.effective,
    /** Every switch off, the request log emptied. */
    reset: faults.reset,
    requests: {
      list: Effect.map(
        faults.requests.list,
        (entries) => entries.map((r): LoggedRequest => ({ method: r.method, path: r.path, accessKey: r.scope }))
      ),
      count: (filter: RequestFilter = {}) => {
        const { accessKey, ...rest } = filter
        return faults.requests.count(accessKey === undefined ? rest : { ...rest, scope: accessKey })
      },
      clear: faults.requests.clear
    },
    middleware: faults.middleware
  })
)

export type Faults = Effect.Effect.Success<typeof makeFaults>
