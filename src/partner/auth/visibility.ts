/** Which operators a request acts for (spec §1 "Operators on a key and visibility"). */
import { Effect } from "effect"
import { NotFound } from "../../domain/errors.js"

export interface HasPartners {
  readonly partners: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

/** The key's operators, or just `partnerId` when it is one of them; any other id is a 404. */
export const operatorIdsFor = (key: HasPartners, partnerId: string | undefined) => {
  if (partnerId === undefined) return Effect.succeed(key.partners.map((p) => p.id))
  return key.partners.some((p) => p.id === partnerId)
    ? Effect.succeed([partnerId])
    : Effect.fail(new NotFound({ detail: "partner_id is not one of this key's operators (not found, or not yours)" }))
}
