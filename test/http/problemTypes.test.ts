/** Problem `type` values and doc links point at headings that exist (renaming one breaks clients' links). */
import { describe, expect, it } from "@effect/vitest"
import { readSection, SECTIONS } from "../../src/http/docs/routes.js"
import { PROBLEM_TYPES } from "../../src/partner/problem.js"

/** GitHub-style heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const anchorsOf = (markdown: string) =>
  new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!.trim().toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-")
    )
  )

describe("problem types and doc anchors", () => {
  it("every problem type has its heading and its row (status, type, title) in errors.md", () => {
    const errors = readSection("errors")
    const anchors = anchorsOf(errors)
    for (const spec of Object.values(PROBLEM_TYPES)) {
      expect(anchors.has(spec.slug), `## ${spec.slug}`).toBe(true)
      expect(errors, spec.slug).toContain(`| ${spec.status} | [\`${spec.slug}\`](#${spec.slug}) | ${spec.title} |`)
    }
  })

  it("every link to a section anchor lands on a heading", () => {
    const anchors = new Map(SECTIONS.map((name) => [name, anchorsOf(readSection(name))]))
    for (const name of SECTIONS) {
      const text = readSection(name)
      const links = [
        ...[...text.matchAll(/\/api\/v1\/docs\/([a-z-]+)\.md#([a-z0-9_-]+)/g)].map((m) => [m[1]!, m[2]!] as const),
        ...[...text.matchAll(/\]\(#([a-z0-9_-]+)\)/g)].map((m) => [name, m[1]!] as const)
      ]
      for (const [section, anchor] of links) {
        expect(anchors.get(section as typeof SECTIONS[number])?.has(anchor), `${name}.md links ${section}.md#${anchor}`)
          .toBe(true)
      }
    }
  })
})
