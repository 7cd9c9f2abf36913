/**
 * What every answer must be, whatever was asked: never a 5xx, never a hang; a status the document
 * lists for the operation; every 4xx the API's error body (problem+json on the partner API,
 * `{error:{code,clerkMessage}}` on quickbook); every 2xx valid against the document's schema.
 */
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import type { Operation } from "./requests.js"

const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
;(addFormats as any)(ajv)
const compiled = new WeakMap<object, any>()
const validator = (schema: object) => {
  let v = compiled.get(schema)
  if (!v) compiled.set(schema, v = ajv.compile(schema))
  return v
}

export type ErrorStyle = "problem" | "quickbook"

export interface Answer {
  readonly status: number
  readonly type: string
  readonly text: string
}

/** What is wrong with `answer` to a request of operation `o` (undefined: nothing). */
export const violation = (o: Operation, style: ErrorStyle, answer: Answer): string | undefined => {
  if (answer.status >= 500) return `${answer.status}`
  const documented = o.op.responses?.[String(answer.status)]
  if (!documented) return `undocumented status ${answer.status}`
  const media = documented.content?.[answer.type]
  if (!media) {
    if (!documented.content && answer.text === "") return undefined
    return `${answer.status} as undocumented ${answer.type || "no content type"}`
  }
  if (!answer.type.includes("json")) return undefined
  let body: any
  try {
    body = JSON.parse(answer.text)
  } catch {
    return `${answer.status} body is not JSON`
  }
  if (answer.status >= 400) {
    if (style === "problem") {
      if (answer.type !== "application/problem+json") return `${answer.status} not problem+json`
      if (body?.status !== answer.status || typeof body.type !== "string" || typeof body.title !== "string") {
        return `${answer.status} problem body incomplete`
      }
    } else if (typeof body?.error?.code !== "string" || typeof body.error.clerkMessage !== "string") {
      return `${answer.status} not {error:{code,clerkMessage}}`
    }
  }
  if (media.schema) {
    const validate = validator(media.schema)
    if (!validate(body)) return `${answer.status} body against schema: ${ajv.errorsText(validate.errors).slice(0, 200)}`
  }
  return undefined
}
