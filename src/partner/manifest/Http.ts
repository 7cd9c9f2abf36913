/** GET /api/v1/manifest: decode (done by HttpApi), resolve the operators in view, read the day. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { operatorIdsFor } from "../auth/visibility.js"
import { Manifest } from "./Manifest.js"
import { Manifest as ManifestSchema } from "./schemas.js"

export const ManifestLive = HttpApiBuilder.group(PartnerApi, "manifest", (handlers) =>
  Effect.gen(function*() {
    const manifest = yield* Manifest
    return handlers.handle("day", ({ urlParams }) =>
      Effect.gen(function*() {
        const key = yield* CurrentKey
        const operatorIds = yield* operatorIdsFor(key, urlParams.partner_id)
        return jsonBody(
          ManifestSchema,
          yield* manifest.day({
            date: urlParams.date,
            operatorIds,
            includeContact: key.scopes.includes("guests.contact:read")
          })
        )
      }))
  })).pipe(Layer.provide(Manifest.Default))
