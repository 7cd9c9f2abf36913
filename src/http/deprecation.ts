/**
 * Deprecating an endpoint (spec §9): mark it with `deprecate(policy)` in the API definition and
 * provide the returned layer. The endpoint is flagged `deprecated: true` in the OpenAPI document and
 * every response carries `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and a `Link` to the notice.
 * It keeps working until the sunset date.
 */
import { type HttpApiEndpoint, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { Context, Layer, Option } from "effect"
import { addResponseHeaders } from "./requestContext.js"

export interface DeprecationPolicy {
  /** When the endpoint was deprecated. */
  readonly since: Date
  /** When it stops working. */
  readonly sunset: Date
  /** Where the notice and the replacement are described. */
  readonly link: string
}

export const deprecationHeaders = (policy: DeprecationPolicy): Record<string, string> => ({
  Deprecation: `@${Math.floor(policy.since.getTime() / 1000)}`,
  Sunset: policy.sunset.toUTCString(),
  Link: `<${policy.link}>; rel="deprecation"`
})

export const deprecate = (name: string, policy: DeprecationPolicy) => {
  class Deprecated extends HttpApiMiddleware.Tag<Deprecated>()(`Deprecated/${name}`) {}
  const layer = Layer.succeed(Deprecated, addResponseHeaders(deprecationHeaders(policy)))
  const note = `Deprecated since ${policy.since.toISOString().slice(0, 10)}; works until ${
    policy.sunset.toISOString().slice(0, 10)
  }. See ${policy.link}.`
  /** Marks an endpoint: OpenAPI `deprecated: true`, the notice in its description, headers at run time. */
  const mark = <E extends HttpApiEndpoint.HttpApiEndpoint.Any>(endpoint: E) => {
    const self = endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
    const description = Option.match(Context.getOption(self.annotations, OpenApi.Description), {
      onNone: () => note,
      onSome: (existing) => `${existing}\n\n${note}`
    })
    return self.middleware(Deprecated).annotate(OpenApi.Deprecated, true).annotate(
      OpenApi.Description,
      description
    ) as unknown as E
  }
  return { Deprecated, layer, mark } as const
}
