/** GET /api/v1/manifest: decode (done by HttpApi), read the day for the key (Manifest.forKey), encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { Manifest } from "./Manifest.js"
import { Manifest as ManifestSchema } from "./schemas.js"

export const ManifestLive = HttpApiBuilder.group(PartnerApi, "manifest", (handlers) =>
  Effect.gen(function*() {
    const manifest = yield* Manifest
    return handlers.handle("day", ({ urlParams }) =>
      Effect.flatMap(CurrentKey, (key) =>
        manifest.forKey(key, urlParams)).pipe(
          Effect.map((day) => jsonBody(ManifestSchema, day))
        ))
  })).pipe(Layer.provide(Manifest.Default))
