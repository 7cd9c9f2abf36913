/**
 * Surfboard's request authentication, checked by the sandbox: `API-KEY` and `API-SECRET` name a
 * partner, `MERCHANT-ID` one of that partner's merchants. A missing header or a wrong key or secret
 * answers 401, a merchant of another partner 403. Messages never repeat what was sent.
 */
import { HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { timingSafeEqual } from "node:crypto"
import { API_KEY_HEADER, API_SECRET_HEADER, MERCHANT_ID_HEADER } from "../../adapters/surfboard/dialect.js"
import { forbidden, unauthorized } from "./failure.js"
import type { Store } from "./store.js"

const header = (request: HttpServerRequest.HttpServerRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" && value !== "" ? value : null
}

/** The merchant id a request names (fault switches are scoped by it). */
export const merchantIdOf = (request: HttpServerRequest.HttpServerRequest) => header(request, MERCHANT_ID_HEADER)

/** Constant-time comparison of a received secret with the stored one. */
export const secretMatches = (received: string, expected: string): boolean => {
  const a = Buffer.from(received, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

export const authenticate = (store: Store) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const apiKey = header(request, API_KEY_HEADER)
    const apiSecret = header(request, API_SECRET_HEADER)
    const merchantId = merchantIdOf(request)
    if (apiKey === null || apiSecret === null || merchantId === null) {
      return yield* unauthorized("Unauthorized: API-KEY, API-SECRET and MERCHANT-ID headers are required.")
    }
    const partner = yield* store.partnerByKey(apiKey)
    if (!partner || !secretMatches(apiSecret, partner.api_secret)) {
      return yield* unauthorized("Unauthorized: Invalid API Key.")
    }
    const merchant = yield* store.merchantById(merchantId)
    if (!merchant || merchant.partner_id !== partner.id) return yield* forbidden("Forbidden: Insufficient permissions.")
    return merchant
  })
