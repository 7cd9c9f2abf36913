/**
 * Keyed calls of the payment sandbox (store.ts): the same Idempotency-Key with the same request
 * answers the stored answer; with another request 422. The check, the change and the stored answer
 * are one transaction.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { SandboxClock } from "./clock.js"
import { SandboxFailure } from "./failure.js"

/** JSON with sorted keys: the same request gives the same text whatever the key order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
    return `{${
      entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
        .join(",")
    }}`
  }
  return JSON.stringify(value)
}

type OrderBody = { readonly controlFunctions?: { readonly online?: Record<string, unknown> } }

/** The body without its payment page's validity (`controlFunctions.online.paymentPageValidFor`). */
const withoutValidity = (body: unknown): unknown => {
  const online = body !== null && typeof body === "object" ? (body as OrderBody).controlFunctions?.online : undefined
  if (online === undefined || online === null || typeof online !== "object") return body
  const { paymentPageValidFor: _, ...rest } = online
  const order = body as OrderBody
  return { ...order, controlFunctions: { ...order.controlFunctions, online: rest } }
}

/**
 * What makes two keyed calls "the same request": method, path and body. A payment page's validity is
 * relative ("15m") and so differs between a first attempt and its retry a moment later: it is left
 * out, and the first attempt's validity stands.
 */
export const fingerprintOf = (method: string, path: string, body: unknown) => {
  return createHash("sha256").update(`${method.toUpperCase()} ${path}\n${canonical(withoutValidity(body))}`).digest(
    "hex"
  )
}

export interface Answer {
  readonly status: number
  readonly body: unknown
}

export const makeKeyed = (clock: SandboxClock) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = clock.now

    /**
     * Runs a call that changes something in one transaction, and once per Idempotency-Key when it
     * carries one: a stored answer is replayed when
     * the request is the same, refused (422) when it is not. Definite refusals (4xx) are not stored:
     * nothing happened, so asking again is asked afresh.
     */
    const keyed = <E, R>(
      merchantId: string,
      key: string | null,
      fingerprint: string,
      run: Effect.Effect<Answer, E, R>
    ) =>
      key === null ? sql.withTransaction(run) : sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`surfboard_sandbox.idempotency:${merchantId}:${key}`}))`
        const [stored] = yield* sql<{ fingerprint: string; status: number; body: unknown }>`
          SELECT fingerprint, status, body FROM surfboard_sandbox.idempotency WHERE merchant_id = ${merchantId} AND key = ${key}`
        if (stored) {
          if (stored.fingerprint !== fingerprint) {
            return yield* new SandboxFailure({
              status: 422,
              message: "Idempotency-Key was already used with a different request.",
              errorCode: "IDEMPOTENCY_KEY_REUSED"
            })
          }
          return { status: stored.status, body: stored.body } satisfies Answer
        }
        const answer = yield* run
        if (answer.status >= 200 && answer.status < 300) {
          yield* sql`INSERT INTO surfboard_sandbox.idempotency ${
            sql.insert({
              merchant_id: merchantId,
              key,
              fingerprint,
              status: answer.status,
              body: JSON.stringify(answer.body),
              created_at: yield* now
            })
          }`
        }
        return answer
      }))

    return keyed
  })
