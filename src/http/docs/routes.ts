/**
 * Human and agent-readable docs next to the API: markdown sections from docs/, a full-text dump for
 * language models, and the changelog. The interactive reference (/api/v1/docs) is HttpApiScalar.
 */
import { HttpApiBuilder, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { packageRoot } from "../../lib/packageRoot.js"
import { partnerOpenApi } from "../../partner/openapi.js"
import type { Json } from "../openapiSchemas.js"

/** docs/api/ of the project, from src/http/docs/ or from the build in dist/. */
const DOCS_DIR = path.join(packageRoot(import.meta.url), "docs", "api") + path.sep

/** Sections in reading order; each file is docs/api/<name>.md. */
export const SECTIONS = [
  "overview",
  "authentication",
  "errors",
  "pagination",
  "rate-limits",
  "bookings",
  "manifest",
  "tours",
  "sales",
  "statements",
  "pay-later",
  "payouts",
  "chargebacks",
  "invoices",
  "analytics",
  "collect",
  "privacy",
  "writes",
  "cancel",
  "reschedule",
  "versioning",
  "changelog"
] as const

export const readSection = (name: string) => fs.readFileSync(`${DOCS_DIR}${name}.md`, "utf8")

const endpointIndex = () => {
  const spec = partnerOpenApi()
  const lines = ["# Endpoint index (from openapi.json)", ""]
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      const params = (op.parameters ?? []).map((p: Json) => `${p.name}${p.required ? "" : "?"}`).join(", ")
      lines.push(`- ${method.toUpperCase()} ${path}${params ? ` (${params})` : ""}: ${op.summary ?? ""}`)
      lines.push(`  responses: ${Object.keys(op.responses).join(", ")}`)
    }
  }
  return lines.join("\n")
}

const markdown = (body: string) => HttpServerResponse.text(body, { contentType: "text/markdown; charset=utf-8" })

export const DocsRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const sections = new Map(SECTIONS.map((name) => [`${name}.md`, readSection(name)]))
    const full = [
      "# Partner API v1: full text",
      "",
      ...SECTIONS.map((name) => sections.get(`${name}.md`)!),
      endpointIndex(),
      "",
      "The machine-readable description is at /api/v1/openapi.json (OpenAPI 3.1)."
    ].join("\n\n")
    const index = [
      "# Partner API v1 documentation",
      "",
      ...SECTIONS.map((name) => `- [${name}](/api/v1/docs/${name}.md)`),
      "- [Full text for language models](/api/v1/llms-full.txt)",
      "- [Interactive reference](/api/v1/docs)",
      "- [OpenAPI 3.1](/api/v1/openapi.json)"
    ].join("\n")

    yield* router.get("/api/v1/docs/index.md", Effect.succeed(markdown(index)))
    yield* router.get(
      "/api/v1/docs/:section",
      Effect.gen(function*() {
        const params = yield* HttpRouter.params
        const body = sections.get(params.section ?? "")
        if (body === undefined) {
          return yield* new HttpServerError.RouteNotFound({ request: yield* HttpServerRequest.HttpServerRequest })
        }
        return markdown(body)
      })
    )
    yield* router.get(
      "/api/v1/llms-full.txt",
      Effect.succeed(HttpServerResponse.text(full, { contentType: "text/plain; charset=utf-8" }))
    )
    yield* router.get("/api/v1/changelog", Effect.succeed(markdown(sections.get("changelog.md")!)))
  })
)
