/** Which definite "no" a Bókun 4xx answer means, as the port's rejection reason. */
import { type BookingSystemAccount, BookingSystemRejected } from "../../ports/BookingSystem.js"
import type * as Dialect from "./dialect.js"

const BY_CODE: Readonly<Record<string, string>> = {
  NOT_FOUND: "not_found",
  NO_AVAILABILITY: "no_seats",
  SOLD_OUT: "no_seats",
  NOT_ENOUGH_AVAILABILITY: "no_seats",
  RESERVATION_EXPIRED: "hold_expired",
  RESERVATIONS_NOT_ALLOWED: "hold_not_supported",
  PRICE_CHANGED: "price_changed",
  INVALID_PHONE_NUMBER: "invalid_phone",
  NOT_ALLOWED: "not_allowed",
  INVALID_REQUEST: "invalid",
  UNAUTHORIZED: "unauthorized"
}

const BY_MESSAGE: ReadonlyArray<readonly [RegExp, string]> = [
  [/expired/i, "hold_expired"],
  [/reserv\w* (is |are )?not (allowed|supported)|RESERVE_FOR_EXTERNAL_PAYMENT/i, "hold_not_supported"],
  [/availab|sold out|no seats|capacity/i, "no_seats"],
  [/not found|unknown|does not exist/i, "not_found"],
  [/price/i, "price_changed"]
]

export const rejectionReason = (status: number, body: Dialect.ErrorBody | null): string => {
  if (status === 401 || status === 403) return "unauthorized"
  const code = body?.errorCode?.toUpperCase()
  if (code && BY_CODE[code]) return BY_CODE[code]
  if (status === 404) return "not_found"
  const message = body?.message ?? ""
  return BY_MESSAGE.find(([re]) => re.test(message))?.[1] ?? (status === 409 ? "not_allowed" : "invalid")
}

/** A request the adapter refuses before calling Bókun: the port's `invalid` rejection. */
export const invalid = (account: BookingSystemAccount, operation: string, detail: string) =>
  new BookingSystemRejected({ accountId: account.id, operation, reason: "invalid", detail })
