/** `me`: the connection's key and the operators it acts for right now: the REST `GET /me` body. */
import { Effect, Schema } from "effect"
import { Me, meOf } from "../../partner/Api.js"
import { CurrentKey } from "../../partner/auth/security.js"
import type { AssistantTool } from "./tool.js"

/** No arguments (an empty object: Effect's empty Struct alone would be "any object or array" in JSON Schema). */
const MeInput = Schema.Struct({}).annotations({ jsonSchema: { type: "object", properties: {} } })
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
