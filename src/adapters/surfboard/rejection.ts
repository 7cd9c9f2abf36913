/** Which definite "no" a Surfboard 4xx answer means, as the port's rejection reason. */
import type { ErrorBody } from "./dialect.js"

/** The sandbox's error codes (Surfboard's reference shows only a message). */
const BY_CODE: Readonly<Record<string, string>> = {
  UNAUTHORIZED: "unauthorized",
  FORBIDDEN: "forbidden",
  NOT_FOUND: "not_found",
  INVALID_REQUEST: "invalid",
  TERMINAL_NOT_FOUND: "terminal_not_found",
  NOT_PAID: "not_paid",
  CURRENCY_MISMATCH: "currency_mismatch",
  REFUND_EXCEEDS_PAID: "refund_exceeds_paid",
  PAYMENT_ALREADY_COMPLETED: "already_completed",
  ORDER_ALREADY_COMPLETED: "already_paid",
  ORDER_ALREADY_CANCELLED: "already_cancelled",
  IDEMPOTENCY_KEY_REUSED: "idempotency_conflict"
}

/** Surfboard's own messages (API reference, error examples), for answers without a code. */
const BY_MESSAGE: ReadonlyArray<readonly [RegExp, string]> = [
  [/idempoten/i, "idempotency_conflict"],
  [/order is already completed/i, "already_paid"],
  [/already cancel+ed/i, "already_cancelled"],
  [/already completed|use void/i, "already_completed"],
  [/exceed/i, "refund_exceeds_paid"],
  [/currency/i, "currency_mismatch"],
  [/terminal/i, "terminal_not_found"],
  [/not (been )?paid|not completed/i, "not_paid"],
  [/not found|does not exist/i, "not_found"]
]

export const rejectionReason = (status: number, body: ErrorBody | null): string => {
  if (status === 401) return "unauthorized"
  const code = body?.errorCode?.toUpperCase()
  if (code && BY_CODE[code]) return BY_CODE[code]
  const data = body?.data as { paymentStatus?: unknown } | null | undefined
  if (status === 403 && data?.paymentStatus === "PAYMENT_COMPLETED") return "already_completed"
  const message = body?.message ?? ""
  const byMessage = BY_MESSAGE.find(([re]) => re.test(message))?.[1]
  if (byMessage) return byMessage
  if (status === 403) return "forbidden"
  if (status === 404) return "not_found"
  return "invalid"
}
