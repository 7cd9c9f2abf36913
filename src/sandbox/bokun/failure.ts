/** A definite answer of the sandbox's Bókun API other than 200: status, message and an error code. */
import { Data } from "effect"

export class SandboxFailure extends Data.TaggedError("SandboxFailure")<{
  readonly status: number
  readonly message: string
  readonly errorCode: string
}> {}

export const notFound = (what: string) =>
  new SandboxFailure({ status: 404, message: `${what} not found`, errorCode: "NOT_FOUND" })

export const badRequest = (message: string, errorCode = "INVALID_REQUEST") =>
  new SandboxFailure({ status: 400, message, errorCode })

export const unauthorized = (message: string) => new SandboxFailure({ status: 401, message, errorCode: "UNAUTHORIZED" })
