/**
 * A write tool of the two-call protocol (issue 16; docs/assistant.md "Confirmations"): called without
 * `confirm_token` it runs the feature's preview (every check the REST write makes, changing nothing)
 * and answers `requires_confirmation` with the summary and a token (Confirmations.ask); called again
 * with the same arguments and the token it runs the REST write once (Confirmations.confirm). Its
 * output schema is the union of the two answers.
 */
import { Effect, Schema } from "effect"
import type { AuthenticatedKey } from "../../partner/auth/KeyAuth.js"
import type { Scope } from "../../partner/auth/scopes.js"
import { CurrentKey } from "../../partner/auth/security.js"
import type { WriteAction, WriteContext, WriteDone } from "../../partner/writes/rules.js"
import { Confirmations, type Preview } from "../confirmations/Confirmations.js"
import { RequiresConfirmation } from "../confirmations/rules.js"
import type { AssistantToolServices } from "./index.js"
import type { AssistantTool, ToolAnnotations } from "./tool.js"

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- the encoded side of any schema (Schema is invariant in it) */
type AnyEncoded = any

export interface WriteToolSpec<Args extends { readonly id: string }, A, I, E1, E2> {
  readonly name: string
  readonly title: string
  readonly description: string
  /** The arguments: `id`, the REST body's fields, `confirm_token`. */
  readonly input: Schema.Schema<Args & { readonly confirm_token?: string | undefined }, AnyEncoded, never>
  /** The REST endpoint's success schema. */
  readonly success: Schema.Schema<A, I>
  readonly scope: Scope
  readonly annotations: ToolAnnotations
  readonly action: WriteAction
  readonly transactional?: boolean
  readonly slotBeforeChange?: boolean
  /** The arguments as bound to a confirmation (decoded, normalised), without `confirm_token`. */
  readonly normalise: (args: Args) => Effect.Effect<Args>
  /** Every check of the REST write, changing nothing, and the summary. */
  readonly preview: (args: Args, key: AuthenticatedKey) => Effect.Effect<Preview, E1, AssistantToolServices>
  /** The REST write's action. */
  readonly perform: (args: Args, ctx: WriteContext) => Effect.Effect<WriteDone<A>, E2, AssistantToolServices>
  readonly text: (result: A) => string
}

export const writeTool = <Args extends { readonly id: string }, A, I, E1, E2>(
  spec: WriteToolSpec<Args, A, I, E1, E2>
): AssistantTool<Args & { readonly confirm_token?: string | undefined }, RequiresConfirmation | A> => ({
  name: spec.name,
  title: spec.title,
  description: spec.description,
  input: spec.input,
  output: Schema.Union(RequiresConfirmation, spec.success as Schema.Schema<A, AnyEncoded>),
  scope: spec.scope,
  annotations: spec.annotations,
  run: ({ confirm_token, ...rest }) =>
    Effect.gen(function*() {
      const key = yield* CurrentKey
      const confirmations = yield* Confirmations
      const args = yield* spec.normalise(rest as unknown as Args)
      const write = {
        tool: spec.name,
        action: spec.action,
        targetId: args.id.toLowerCase(),
        args,
        success: spec.success,
        ...(spec.transactional ? { transactional: true } : {}),
        ...(spec.slotBeforeChange ? { slotBeforeChange: true } : {})
      }
      if (confirm_token === undefined) return yield* confirmations.ask(write, yield* spec.preview(args, key))
      return yield* confirmations.confirm(
        write,
        confirm_token,
        spec.preview(args, key),
        (ctx) => spec.perform(args, ctx)
      )
    }),
  text: (output) =>
    Schema.is(RequiresConfirmation)(output)
      ? `${output.summary}\n\nNothing has been done yet. Show this to the person; if they agree, call ${spec.name} ` +
        `again with the same arguments and confirm_token "${output.confirm_token}" (valid until ${output.expires_at}).`
      : spec.text(output)
})
