/**
 * Whether a failure means the database did not answer (refused, timed out acquiring a connection,
 * terminated under the statement, shutting down or starting up), as opposed to a SQL error that is
 * a bug (syntax, a constraint, a row that does not decode). Repositories turn every `SqlError` into
 * a defect at their edge (./repoEdge.ts); each API's one error mapping asks this of a defect and
 * answers 503 with `Retry-After` instead of 500 (src/partner/problem.ts, src/quickbook/errorMapping.ts,
 * src/assistant/Http.ts). A request refused this way changed nothing it could not roll back, so a
 * retry (with the same Idempotency-Key) is safe.
 */
import { Cause, Option, Predicate, Runtime } from "effect"

/** Seconds a client is asked to wait (`Retry-After`) when the database did not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5

/**
 * PostgreSQL SQLSTATEs of a server that is not there for us: class 08 (connection exception),
 * 57P01–57P03 (admin shutdown, e.g. pg_terminate_backend; crash shutdown; cannot connect now),
 * 53300 (too many connections).
 */
const UNREACHABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/

/** Node's socket errors, and node-postgres's own words for a connection it lost or never got. */
const UNREACHABLE_ERRNO = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])
const UNREACHABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection timed out|not queryable/i

/** @effect/sql-pg's messages for a connection it could not get or lost (whatever the driver's cause). */
const UNREACHABLE_SQL_MESSAGE =
  /^(Failed to acquire connection|Connection error|PgClient: (Failed to connect|Connection timed out))/

const isDriverUnreachable = (error: unknown, depth = 0): boolean => {
  if (depth > 4 || typeof error !== "object" || error === null) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === "string" && (UNREACHABLE_SQLSTATE.test(code) || UNREACHABLE_ERRNO.has(code))) return true
  const message = (error as { message?: unknown }).message
  if (typeof message === "string" && UNREACHABLE_MESSAGE.test(message)) return true
  // An AggregateError (several addresses refused) or a wrapped cause.
  const errors = (error as { errors?: unknown }).errors
  if (Array.isArray(errors) && errors.some((e) => isDriverUnreachable(e, depth + 1))) return true
  return isDriverUnreachable((error as { cause?: unknown }).cause, depth + 1)
}

/** Whether one error (an `SqlError`, or what an adapter's promise rejected with) is the database not answering. */
export const isDatabaseUnreachableError = (error: unknown): boolean => {
  if (Runtime.isFiberFailure(error)) return isDatabaseUnreachable(error[Runtime.FiberFailureCauseId])
  if (!Predicate.isTagged(error, "SqlError")) return false
  const message = (error as { message?: unknown }).message
  return (typeof message === "string" && UNREACHABLE_SQL_MESSAGE.test(message)) ||
    isDriverUnreachable((error as { cause?: unknown }).cause)
}

/** Whether a failed request's cause (failures and defects) holds the database not answering. */
export const isDatabaseUnreachable = (cause: Cause.Cause<unknown>): boolean =>
  Option.isSome(
    Cause.find(cause, (reason) =>
      (reason._tag === "Fail" && isDatabaseUnreachableError(reason.error)) ||
        (reason._tag === "Die" && isDatabaseUnreachableError(reason.defect))
        ? Option.some(true)
        : Option.none())
  )
