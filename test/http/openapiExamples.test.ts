/**
 * Examples that teach (issue 18 item 3): clean, unique operation ids; a request and a response
 * example on every operation of both documents and an error body example on every error answer,
 * each valid against its schema; the landing links the guides; every problem `type` names a
 * section of docs/api/errors.md.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it } from "@effect/vitest"
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import * as fs from "node:fs"
import { partnerOpenApi } from "../../src/partner/openapi.js"
import { PROBLEM_TYPES } from "../../src/partner/problem.js"
import { quickbookOpenApi } from "../../src/quickbook/openapi.js"

const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
;(addFormats as any)(ajv)

const operations = (doc: any): Array<[string, any]> =>
  Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => [`${method} ${path}`, op] as [string, any])
  )

const docs: Array<[string, any]> = [["partner", partnerOpenApi()], ["quickbook", quickbookOpenApi()]]

describe.each(docs)("the %s document's examples", (_name, doc) => {
  it("names every operation once, in camelCase", () => {
    const ids = operations(doc).map(([, op]) => op.operationId)
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("shows an example of every request body, every JSON success answer and every error answer", () => {
    const missing: Array<string> = []
    for (const [at, op] of operations(doc)) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        if (Object.keys(media.examples ?? {}).length === 0) missing.push(`${at} request ${type}`)
      }
      for (const [status, response] of Object.entries<any>(op.responses)) {
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          if (!type.includes("json")) continue
          if (Object.keys(media.examples ?? {}).length === 0) missing.push(`${at} ${status} ${type}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it("gives every operation with a JSON answer a success example", () => {
    const without = operations(doc).filter(([, op]) =>
      Object.entries<any>(op.responses).some(([s, r]) => s.startsWith("2") && r.content?.["application/json"]) &&
      !Object.entries<any>(op.responses).some(([s, r]) =>
        s.startsWith("2") && Object.keys(r.content?.["application/json"]?.examples ?? {}).length > 0
      )
    ).map(([at]) => at)
    expect(without).toEqual([])
  })

  it("validates every example against its schema", async () => {
    const deref: any = await SwaggerParser.dereference(structuredClone(doc))
    const bad: Array<string> = []
    let checked = 0
    for (const [at, op] of operations(deref)) {
      const medias: Array<[string, any]> = [
        ...Object.entries<any>(op.requestBody?.content ?? {}).map(([t, m]) => [`request ${t}`, m] as [string, any]),
        ...Object.entries<any>(op.responses).flatMap(([s, r]) =>
          Object.entries<any>(r.content ?? {}).map(([t, m]) => [`${s} ${t}`, m] as [string, any])
        )
      ]
      for (const [where, media] of medias) {
        const validate = ajv.compile(media.schema)
        for (const [name, example] of Object.entries<any>(media.examples ?? {})) {
          checked++
          if (!validate(example.value)) bad.push(`${at} ${where} ${name}: ${JSON.stringify(validate.errors)}`)
        }
      }
    }
    expect(bad).toEqual([])
    expect(checked).toBeGreaterThan(operations(doc).length * 2)
  })
})

describe("the partner document's landing and problem types", () => {
  const doc: any = partnerOpenApi()
  const errorsPage = fs.readFileSync("docs/api/errors.md", "utf8")
  const anchors = (page: string) =>
    new Set(
      [...page.matchAll(/^#+ (.+)$/gm)].map((m) =>
        m[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")
      )
    )

  it("links the guides from the landing, each to a section that exists", () => {
    const links = [...(doc.info.description as string).matchAll(/\]\(\/api\/v1\/docs\/([\w-]+)\.md(?:#([\w-]+))?\)/g)]
    expect(links.map((m) => m[1])).toEqual(
      expect.arrayContaining([
        "authentication",
        "pagination",
        "rate-limits",
        "errors",
        "writes",
        "versioning",
        "changelog"
      ])
    )
    for (const [, page, anchor] of links) {
      const text = fs.readFileSync(`docs/api/${page}.md`, "utf8")
      if (anchor !== undefined) expect(anchors(text), `${page}.md#${anchor}`).toContain(anchor)
    }
  })

  it("names, in every problem type, a section of docs/api/errors.md", () => {
    const sections = anchors(errorsPage)
    for (const type of PROBLEM_TYPES) expect(sections, type.slug).toContain(type.slug)
  })

  it("shows, in every error example, a problem type URI of errors.md", () => {
    const sections = anchors(errorsPage)
    for (const [, op] of operations(doc)) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue
        for (const example of Object.values<any>(response.content["application/problem+json"].examples)) {
          const [page, slug] = String(example.value.type).split("#")
          expect(page).toBe("/api/v1/docs/errors.md")
          expect(sections).toContain(slug)
          expect(example.value.status).toBe(Number(status))
        }
      }
    }
  })
})
