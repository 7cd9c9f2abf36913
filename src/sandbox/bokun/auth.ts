/**
 * Bókun's request authentication, checked by the sandbox: the three X-Bokun headers must be there,
 * the date no further than five minutes from now, the access key known, and the signature the
 * HMAC-SHA1 of date + access key + method + path-and-query under the vendor's secret key.
 */
import { HttpServerRequest } from "@effect/platform"
import { Clock, Effect } from "effect"
import {
  ACCESS_KEY_HEADER,
  DATE_HEADER,
  parseBokunDate,
  signature,
  SIGNATURE_HEADER,
  signatureMatches
} from "../../adapters/bokun/signing.js"
import { unauthorized } from "./failure.js"
import type { Store } from "./store.js"

export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000

const header = (request: HttpServerRequest.HttpServerRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" && value !== "" ? value : null
}

export const authenticate = (store: Store) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const date = header(request, DATE_HEADER)
    const accessKey = header(request, ACCESS_KEY_HEADER)
    const received = header(request, SIGNATURE_HEADER)
    if (date === null || accessKey === null || received === null) {
      return yield* unauthorized(
        "Authentication failed: X-Bokun-Date, X-Bokun-AccessKey and X-Bokun-Signature are required"
      )
    }
    const at = parseBokunDate(date)
    if (at === null) return yield* unauthorized("Authentication failed: X-Bokun-Date must be yyyy-MM-dd HH:mm:ss (UTC)")
    const now = yield* Clock.currentTimeMillis
    if (Math.abs(now - at) > MAX_CLOCK_SKEW_MS) {
      return yield* unauthorized("Authentication failed: X-Bokun-Date is more than 5 minutes from the server time")
    }
    const vendor = yield* store.vendorByAccessKey(accessKey)
    if (!vendor) return yield* unauthorized("Authentication failed: unknown access key")
    const expected = signature({
      date,
      accessKey,
      secretKey: vendor.secret_key,
      method: request.method,
      pathAndQuery: request.originalUrl
    })
    if (!signatureMatches(received, expected)) return yield* unauthorized("Authentication failed: signature mismatch")
    return vendor
  })
