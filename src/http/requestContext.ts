/**
 * Per-request state shared between the API-level middleware (which creates it and writes the
 * response headers) and the code deeper down (security, handlers) that has headers to add.
 * Carried in a FiberRef so nothing has to thread it through signatures.
 */
import { Effect, FiberRef } from "effect"

export interface RequestContext {
  readonly requestId: string
  /** Headers to set on the response, whatever its status. */
  readonly headers: Record<string, string>
}

export const CurrentRequest = FiberRef.unsafeMake<RequestContext>({ requestId: "-", headers: {} })

export const addResponseHeaders = (headers: Record<string, string>) =>
  Effect.map(FiberRef.get(CurrentRequest), (ctx) => {
    Object.assign(ctx.headers, headers)
  })
