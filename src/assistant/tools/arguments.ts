/**
 * A tool call's arguments decoded with the tool's input schema, a failure shown exactly as the REST
 * API shows a request that does not decode (HttpApi's decode error: 400 `invalid-request` with one
 * `invalid_params` entry per argument, src/partner/problem.ts), so an argument's rule reads the same
 * over MCP as over REST.
 */
import { HttpApiError } from "@effect/platform"
import { Effect, Schema } from "effect"
import type { AssistantTool } from "./tool.js"

export const decodeArguments = <I>(tool: AssistantTool<I>, args: unknown) =>
  Schema.decodeUnknown(tool.input, { errors: "all", onExcessProperty: "ignore" })(args ?? {}).pipe(
    Effect.catchTag("ParseError", HttpApiError.HttpApiDecodeError.refailParseError)
  )
