/**
 * The `collect` group of the Partner API: POST /api/v1/collect, the public endpoint a site's pages
 * report analytics events to (docs/api/collect.md; the snippet is examples/analytics.js). No bearer
 * key: the body carries the site's publishable key. Sent by browsers as `text/plain` (no CORS
 * preflight) or `application/json`; the body is small (src/http/requestBody.ts, COLLECT_BODY_LIMIT).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EVENT_KINDS, MAX_PATH_LENGTH } from "../../analytics/events.js"
import { InvalidRequest, NotFound, RateLimited } from "../../domain/errors.js"
import type { Json } from "../../http/openapiSchemas.js"
import { BodyTooLarge, UnsupportedMediaType } from "../../http/requestBody.js"

const MAX_URL_LENGTH = 2000

const Url = Schema.String.pipe(Schema.maxLength(MAX_URL_LENGTH)).annotations({
  message: () => ({ message: `must be a string of at most ${MAX_URL_LENGTH} characters`, override: true })
})

export const CollectBody = Schema.Struct({
  key: Schema.String.pipe(Schema.pattern(/^pk_widget_[A-Za-z0-9]{24}$/)).annotations({
    jsonSchema: { pattern: "^pk_widget_[A-Za-z0-9]{24}$", maxLength: 34 },
    description: "The site's publishable key (`pk_widget_...`).",
    message: () => ({ message: "must be a publishable key: pk_widget_ and 24 letters or digits", override: true })
  }),
  kind: Schema.Literal(...EVENT_KINDS).annotations({
    description: "`pageview` on every page load; the tour steps as the visitor takes them."
  }),
  url: Url.annotations({
    description: `The page's URL (\`location.href\`). Only the path is stored (at most ${MAX_PATH_LENGTH} ` +
      "characters), with the `utm_source`, `utm_medium` and `utm_campaign` parameters; the rest of the query is dropped."
  }),
  referrer: Schema.optional(Schema.NullOr(Url)).annotations({
    description: "`document.referrer`; only its host is stored, and none when it is the page's own site."
  }),
  new_visitor: Schema.Boolean.annotations({
    description: "true when the browser had no first-party marker of an earlier visit (the marker holds no identifier)."
  }),
  tour_id: Schema.optional(Schema.NullOr(Schema.UUID)).annotations({
    description: "The tour (`id` from GET /tours) of a tour step; not with `pageview`."
  }),
  booking_code: Schema.optional(Schema.NullOr(
    Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/)).annotations({
      jsonSchema: { pattern: "^[A-Za-z0-9_-]{1,64}$", maxLength: 64 },
      message: () => ({ message: "must be 1 to 64 letters, digits, - or _", override: true })
    })
  )).annotations({
    description: "With `checkout_attempt` only: the confirmation code the checkout answered, if it did."
  })
}).pipe(
  Schema.filter((body) => {
    if (body.kind === "pageview" && body.tour_id != null) return { path: ["tour_id"], message: "not with pageview" }
    if (body.kind !== "checkout_attempt" && body.booking_code != null) {
      return { path: ["booking_code"], message: "only with checkout_attempt" }
    }
    return undefined
  })
).annotations({ identifier: "CollectEvent" })

/** The document says what the route takes: the same JSON body sent as `text/plain` too. */
const alsoTextPlain = (operation: Json): Json => ({
  ...operation,
  requestBody: {
    ...operation.requestBody,
    content: {
      ...operation.requestBody?.content,
      "text/plain": operation.requestBody?.content?.["application/json"]
    }
  }
})

export class CollectGroup extends HttpApiGroup.make("collect")
  .annotate(OpenApi.Title, "Analytics collection")
  .annotate(
    OpenApi.Description,
    "Page views and tour steps sent by the operators' sites with a publishable key (no Authorization header)."
  )
  .add(
    HttpApiEndpoint.post("collect", "/collect")
      .setPayload(CollectBody)
      .addSuccess(HttpApiSchema.Empty(202))
      .addError(InvalidRequest)
      .addError(NotFound)
      .addError(RateLimited)
      .addError(BodyTooLarge)
      .addError(UnsupportedMediaType)
      .annotateContext(OpenApi.annotations({
        identifier: "collectEvent",
        transform: alsoTextPlain,
        summary: "Report a page view or a tour step (site analytics)",
        description:
          "Public: no Authorization header; the body's `key` is the site's publishable key. Browsers send it as " +
          "`Content-Type: text/plain` (no CORS preflight: `navigator.sendBeacon` or `fetch` with `keepalive`), or " +
          "`application/json`. 202 with no body once the event is taken, and also when it is dropped: from an " +
          "`Origin` that is not one of the key's allowed origins, or from a bot. 404 when no site has the key (or it " +
          "was revoked); 429 past the events per minute one address may send for one site. No cookie is set and " +
          "neither the address nor the user agent is stored (see /api/v1/docs/privacy.md)."
      }))
  )
  .prefix("/api/v1")
{}
