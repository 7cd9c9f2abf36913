/**
 * A definite answer of the sandbox's Surfboard API other than 200: Surfboard's error envelope
 * `{status: "ERROR", message, data?}` plus the sandbox's own `errorCode`.
 */
import { Data } from "effect"

export class SandboxFailure extends Data.TaggedError("SurfboardSandboxFailure")<{
  readonly status: number
  readonly message: string
  readonly errorCode: string
  readonly data?: unknown
}> {}

export const notFound = (what: string) =>
  new SandboxFailure({ status: 404, message: `${what} not found.`, errorCode: "NOT_FOUND" })

export const badRequest = (message: string, errorCode = "INVALID_REQUEST") =>
  new SandboxFailure({ status: 400, message, errorCode })

export const unauthorized = (message: string) => new SandboxFailure({ status: 401, message, errorCode: "UNAUTHORIZED" })

export const forbidden = (message: string) => new SandboxFailure({ status: 403, message, errorCode: "FORBIDDEN" })
