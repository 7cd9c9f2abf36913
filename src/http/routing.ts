/**
 * A path the server knows, asked with a method it does not serve there, answers 405 with `Allow`
 * (both APIs) rather than 404: the router only says "no route", so the middleware asks the
 * routes which methods the path has (`refailWrongMethod`). An unknown path stays 404.
 */
import { type HttpRouter, HttpServerError } from "@effect/platform"
import { Chunk, Effect, Schema } from "effect"
import { problemType } from "../domain/errors.js"
import { echo } from "./echo.js"

export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  {
    detail: Schema.String,
    method: Schema.String,
    path: Schema.String,
    /** The methods the path takes, as sent in `Allow`. */
    allow: Schema.Array(Schema.String)
  },
  problemType({
    status: 405,
    slug: "method-not-allowed",
    title: "Method not allowed",
    description: "The path exists but does not take this method; `Allow` lists those it takes."
  })
) {}

/** The path of a URL as quoted back in a message (cut as every echoed input is: src/http/echo.ts). */
export const quotablePath = (url: string) => echo(url.split("?")[0]!)

/** Whether a route path (`/api/v1/bookings/:id`, `*` for the rest) matches a request path. */
const matches = (pattern: string, path: string) => segmentsMatch(pattern.split("/"), path.split("/"))

/** The methods the routes serve on a path, sorted, HEAD with GET (the router answers HEAD with GET). */
export const methodsFor = (routes: Iterable<{ readonly method: string; readonly path: string }>, path: string) => {
  const methods = new Set<string>()
  for (const route of routes) {
    if (!matches(route.path, path)) continue
    if (route.method === "*") return ["*"]
    methods.add(route.method)
    if (route.method === "GET") methods.add("HEAD")
  }
  return [...methods].sort()
}

/**
 * Turns the router's "no route" into 405 when the path has routes for other methods. `router` is
 * the API router (HttpApiBuilder.Router); it is read when needed, so it holds every route by then.
 */
export const refailWrongMethod =
  (router: { readonly router: Effect.Effect<HttpRouter.HttpRouter<unknown, unknown>> }) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | MethodNotAllowed, R> =>
    Effect.catchIf(
      effect,
      (e): e is E & HttpServerError.RouteNotFound => e instanceof HttpServerError.RouteNotFound,
      (notFound) =>
        Effect.flatMap(router.router, (current): Effect.Effect<never, E | MethodNotAllowed> => {
          const { method, url } = notFound.request
          const path = url.split("?")[0]!
          const allow = methodsFor(Chunk.toReadonlyArray(current.routes), path)
          if (allow.length === 0 || allow.includes("*") || allow.includes(method)) return Effect.fail(notFound)
          return Effect.fail(
            new MethodNotAllowed({
              detail: `${method} is not allowed on ${quotablePath(url)}; it takes ${allow.join(", ")}`,
              method,
              path: quotablePath(url),
              allow
            })
          )
        })
    )

/**
 * The route template a request matched (`/api/v1/bookings/{id}`), for metrics: among the routes of
 * the method (GET for HEAD) whose pattern matches the path, the one with the most literal segments
 * (as the router prefers `/bookings/export` to `/bookings/:id`); `unmatched` when none does, so a
 * raw path never becomes a label. The table is built on the first call, once every route is known.
 */
export const routeMatcher = (routes: () => Iterable<{ readonly method: string; readonly path: string }>) => {
  interface Entry {
    readonly segments: Array<string>
    readonly literal: number
    readonly template: string
  }
  // By method, then by segment count (-1: patterns with `*`, which match any longer path).
  let table: Map<string, Map<number, Array<Entry>>> | undefined
  const build = () => {
    const built = new Map<string, Map<number, Array<Entry>>>()
    for (const route of routes()) {
      const segments = route.path.split("/")
      const entry = {
        segments,
        literal: segments.filter((s) => !s.startsWith(":") && s !== "*").length,
        template: route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")
      }
      const byLength = built.get(route.method) ?? new Map<number, Array<Entry>>()
      const length = segments.includes("*") ? -1 : segments.length
      byLength.set(length, [...(byLength.get(length) ?? []), entry])
      built.set(route.method, byLength)
    }
    table = built
    return built
  }
  return (method: string, url: string): string => {
    const byMethod = table ?? build()
    const got = url.split("?")[0]!.split("/")
    let best: Entry | undefined
    for (const byLength of [byMethod.get(method === "HEAD" ? "GET" : method), byMethod.get("*")]) {
      if (byLength === undefined) continue
      for (const candidates of [byLength.get(got.length), byLength.get(-1)]) {
        for (const route of candidates ?? []) {
          if ((best === undefined || route.literal > best.literal) && segmentsMatch(route.segments, got)) best = route
        }
      }
    }
    return best?.template ?? "unmatched"
  }
}

const segmentsMatch = (want: ReadonlyArray<string>, got: ReadonlyArray<string>) => {
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!
    if (segment === "*") return true
    if (i >= got.length) return false
    if (segment.startsWith(":") ? got[i] === "" : segment !== got[i]) return false
  }
  return want.length === got.length
}
