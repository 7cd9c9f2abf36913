/**
 * The curl samples of the guides (docs/api/*.md) are valid as shown (issue 18 item 3): every
 * Partner API write has one, and each names an operation of the served document, sends the headers
 * it needs (key, a well-formed Idempotency-Key, the body's content type) and a body its schema takes.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it } from "@effect/vitest"
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import { Either } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import { partnerOpenApi } from "../../src/partner/openapi.js"
import { parseIdempotencyKey } from "../../src/partner/writes/rules.js"

const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
;(addFormats as any)(ajv)

interface Sample {
  readonly at: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
}

/** Every curl command of the guides' `sh` blocks, read the way a shell would for these samples. */
const samples = (): Array<Sample> =>
  fs.readdirSync("docs/api").filter((f) => f.endsWith(".md")).flatMap((file) => {
    const text = fs.readFileSync(`docs/api/${file}`, "utf8")
    return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((block) =>
      block[1]!.replace(/\\\n\s*/g, " ").split("\n").filter((line) => line.startsWith("curl ")).map((line) => {
        const shell = line.replace(/\\"\$\(uuidgen\)\\"/g, `\\"${randomUUID()}\\"`)
        const url = /curl [^"]*"([^"]+)"/.exec(shell)![1]!
        const headers = Object.fromEntries(
          [...shell.matchAll(/-H "((?:[^"\\]|\\.)*)"/g)].map((m) => {
            const [name, ...value] = m[1]!.replace(/\\"/g, "\"").split(":")
            return [name!.trim().toLowerCase(), value.join(":").trim()]
          })
        )
        return {
          at: `${file}: ${line.slice(0, 80)}`,
          method: /-X (\w+)/.exec(shell)?.[1] ?? (/ -d '/.test(shell) ? "POST" : "GET"),
          path: url.replace("$BASE_URL", "").split("?")[0]!,
          headers,
          body: /-d '([^']*)'/.exec(shell)?.[1]
        }
      })
    )
  })

const templateOf = (doc: any, path: string) =>
  Object.keys(doc.paths).find((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(path))

describe("the curl samples of docs/api", async () => {
  const doc: any = await SwaggerParser.dereference(structuredClone(partnerOpenApi()) as any)
  const all = samples()
  const writes = all.filter((s) => s.method !== "GET")

  it("show every write of the Partner API", () => {
    const shown = new Set(writes.map((s) => `${s.method.toLowerCase()} ${templateOf(doc, s.path)}`))
    const missing = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).filter((m) => m !== "get" && !shown.has(`${m} ${path}`)).map((m) => `${m} ${path}`)
    )
    expect(missing).toEqual([])
  })

  it("name operations of the document", () => {
    const unknown = all.filter((s) => {
      const template = templateOf(doc, s.path)
      return template === undefined || doc.paths[template][s.method.toLowerCase()] === undefined
    })
    expect(unknown.map((s) => s.at)).toEqual([])
  })

  // The reads' samples include refusals on purpose (a secret key in the URL): the writes are checked whole.
  it("send each write with the headers and the body it takes", () => {
    expect(writes.length).toBeGreaterThan(0)
    const bad: Array<string> = []
    for (const s of writes) {
      const template = templateOf(doc, s.path)
      const op = template === undefined ? undefined : doc.paths[template][s.method.toLowerCase()]
      if (op === undefined) {
        bad.push(`${s.at}: no ${s.method} ${s.path} in the document`)
        continue
      }
      const secured = (op.security ?? []).some((r: any) => "bearer" in r)
      if (secured && s.headers.authorization !== "Bearer $PARTNER_KEY") bad.push(`${s.at}: no Authorization`)
      const idempotency = (op.parameters ?? []).find((p: any) => p.name === "Idempotency-Key")
      if (idempotency?.required && Either.isLeft(parseIdempotencyKey(s.headers["idempotency-key"]))) {
        bad.push(`${s.at}: Idempotency-Key ${s.headers["idempotency-key"]}`)
      }
      if (op.requestBody) {
        const type = (s.headers["content-type"] ?? "").split(";")[0]!
        const media = op.requestBody.content[type]
        if (media === undefined) bad.push(`${s.at}: Content-Type ${type} not taken`)
        else if (s.body === undefined) bad.push(`${s.at}: no body`)
        else {
          const validate = ajv.compile(media.schema)
          if (!validate(JSON.parse(s.body))) bad.push(`${s.at}: ${JSON.stringify(validate.errors)}`)
        }
      }
    }
    expect(bad).toEqual([])
  })
})
