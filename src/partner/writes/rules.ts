/**
 * Rules every write shares (spec §8): the actions and their default daily limits, the
 * `Idempotency-Key` header syntax, and what "the same request" means. Pure code, no I/O.
 */
import type { Statement } from "@effect/sql"
import { type Effect, Either } from "effect"
import { createHash } from "node:crypto"
import type { DailyLimitReached } from "../../domain/errors.js"

/** Each write counts against one daily limit; the name is also the audit action. */
export const WRITE_ACTIONS = ["checkins", "payment_links", "cancels", "reschedules"] as const
export type WriteAction = typeof WRITE_ACTIONS[number]

export const isWriteAction = (value: string): value is WriteAction =>
  (WRITE_ACTIONS as ReadonlyArray<string>).includes(value)

/** Per key per UTC day, unless the key has an override. */
export const DEFAULT_DAILY_LIMITS: Readonly<Record<WriteAction, number>> = {
  checkins: 2000,
  payment_links: 50,
  cancels: 20,
  reschedules: 20
}

/** How long a finished request's response is replayed for its Idempotency-Key. */
export const IDEMPOTENCY_WINDOW_HOURS = 24

/**
 * How long a running request holds its Idempotency-Key without renewing it (the default of
 * IDEMPOTENCY_LEASE_SECONDS). The request renews it every third of this while it runs, so only a
 * dead process lets it lapse.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 30

/** What a write's action gets from the shared write machinery. */
export interface WriteContext {
  readonly keyId: string
  /**
   * The request's Idempotency-Key: names this action, so that a retry after a crash (same key)
   * finds the progress the first attempt recorded (e.g. an email's dedupe key).
   */
  readonly idempotencyKey: string
  /** The operators the key acts for: the target must belong to one of them (else 404). */
  readonly operatorIds: ReadonlyArray<string>
  /** Names the operator the target belongs to, as soon as it is known (for the audit log). */
  readonly target: (operatorId: string) => Effect.Effect<void>
  /**
   * Call right before the first side effect: takes today's daily-limit slot when the write asked
   * for it late (`slotBeforeChange`), failing with 429 when none is left; otherwise does nothing.
   */
  readonly beforeChange: Effect.Effect<void, DailyLimitReached>
}

/** What a write's action returns when it did not refuse. */
export interface WriteDone<A> {
  /** The response body (status 200). */
  readonly body: A
  /** True when nothing changed: the daily-limit slot is given back and the audit says `noop`. */
  readonly noop: boolean
  /**
   * The change itself, left to the write's final statement (a transactional write only): one
   * data-modifying statement (`INSERT`, `UPDATE` or `DELETE`, no `RETURNING` needed) run as a CTE of
   * the statement that stores the answer and appends the audit entry, so the change costs no round
   * trip of its own. It commits with them, or rolls back with them when the claim was lost.
   */
  readonly change?: Statement.Fragment | undefined
}

/** Outcomes recorded in the audit log. */
export type AuditOutcome = "done" | "noop" | "replayed" | "refused" | "failed"

export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
export const IDEMPOTENT_REPLAYED_HEADER = "Idempotent-Replayed"

/** 8 to 255 characters; UUIDs, ULIDs and base64/base64url tokens all fit. */
const KEY_VALUE = /^[A-Za-z0-9._~:+/=-]{8,255}$/

export const IDEMPOTENCY_KEY_RULE =
  "must be 8 to 255 characters from A-Z a-z 0-9 . _ ~ : + / = -, bare or in double quotes (a UUID is ideal)"

/**
 * The `Idempotency-Key` value: bare (`abc…`) or as the IETF draft writes it, a structured-field
 * string (`"abc…"`). Right: the key; Left: why it is refused.
 */
export const parseIdempotencyKey = (raw: string | undefined): Either.Either<string, string> => {
  if (raw === undefined || raw.trim() === "") {
    return Either.left(`the ${IDEMPOTENCY_KEY_HEADER} header is required on every write; ${IDEMPOTENCY_KEY_RULE}`)
  }
  const trimmed = raw.trim()
  const value = trimmed.length >= 2 && trimmed.startsWith("\"") && trimmed.endsWith("\"")
    ? trimmed.slice(1, -1)
    : trimmed
  return KEY_VALUE.test(value)
    ? Either.right(value)
    : Either.left(`the ${IDEMPOTENCY_KEY_HEADER} header ${IDEMPOTENCY_KEY_RULE}`)
}

/**
 * JSON with object keys sorted at every level and undefined members dropped. Iterative (an explicit
 * stack, not recursion), so no nesting depth can overflow the call stack.
 */
export const canonicalJson = (value: unknown): string => {
  const out: Array<string> = []
  /** Open arrays and objects: the members still to write, and how many are written. */
  const stack: Array<
    { readonly close: "]" | "}"; readonly members: ReadonlyArray<readonly [string | null, unknown]>; next: number }
  > = []
  const write = (v: unknown) => {
    if (v === null || typeof v !== "object") {
      out.push(JSON.stringify(v) ?? "null")
    } else if (Array.isArray(v)) {
      out.push("[")
      stack.push({ close: "]", members: v.map((item) => [null, item === undefined ? null : item] as const), next: 0 })
    } else {
      out.push("{")
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, member]) => member !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      stack.push({ close: "}", members: entries, next: 0 })
    }
  }
  write(value)
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.next === top.members.length) {
      out.push(top.close)
      stack.pop()
      continue
    }
    const [key, member] = top.members[top.next]!
    if (top.next++ > 0) out.push(",")
    if (key !== null) out.push(`${JSON.stringify(key)}:`)
    write(member)
  }
  return out.join("")
}

/**
 * "The same request": method, path (ids are case-insensitive UUIDs) and the decoded body in
 * canonical form, so key order, whitespace and ignored members do not make two requests differ.
 */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  createHash("sha256")
    .update(`${method.toUpperCase()} ${path.toLowerCase()}\n${canonicalJson(body)}`)
    .digest("hex")
