/** `me`: the connection's key and the operators it acts for right now: the REST `GET /me` body. */
import { Effect, Schema } from "effect"
import { Me, meOf } from "../../partner/Api.js"
import { CurrentKey } from "../../partner/auth/security.js"
import type { AssistantTool } from "./tool.js"

const MeInput = Schema.Struct({})
type MeInput = typeof MeInput.Type

export const meTool: AssistantTool<MeInput, typeof Me.Type> = {
  name: "me",
  title: "Who am I",
  description: "The connection (it acts like an API key of the person who connected it): its scopes, and the " +
    "operators it acts for right now (those picked when connecting where the person is still owner or admin). " +
    "Call it first to learn the operator ids the other tools take as `partner_id`.",
  input: MeInput,
  output: Me,
  scope: null,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: () => Effect.map(CurrentKey, meOf),
  text: (me) =>
    `Connection ${me.key.id} (${me.key.scopes.join(", ")}) acting for ${
      me.partners.map((p) => `${p.name} (${p.id})`).join(", ")
    }.`
}
