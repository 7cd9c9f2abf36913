/**
 * Comparing the service's answer with the floor's (`npm run bench:tours`, `npm run bench:desk`):
 * JSON by content, and the statements each sent (bench/sqlTrace.ts records them).
 */
import * as fs from "node:fs"

/** JSON with object keys sorted, so two bodies compare by content. */
export const canonical = (text: string) => {
  const sort = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sort)
      : value !== null && typeof value === "object"
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sort((value as Record<string, unknown>)[k])]))
      : value
  try {
    return JSON.stringify(sort(JSON.parse(text)))
  } catch {
    return text
  }
}

export const normalizeSql = (text: string) => text.replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")").trim()

export interface TracedStatement {
  readonly text: string
  readonly values: ReadonlyArray<unknown>
}

/** The statements a trace file holds from byte `from` on (a byte offset: sliced before decoding). */
export const readTrace = (file: string, from: number): Array<TracedStatement> =>
  fs.readFileSync(file).subarray(from).toString("utf8").split("\n").filter((l) => l !== "").map((l) =>
    JSON.parse(l) as TracedStatement
  )

/** Where two canonical bodies first differ, with some context, or undefined when they are equal. */
export const bodyDifference = (service: string, floor: string) => {
  const a = canonical(service)
  const b = canonical(floor)
  if (a === b) return undefined
  let at = 0
  while (at < a.length && a[at] === b[at]) at++
  return `the JSON bodies differ from character ${at}:\n  service: …${
    a.slice(Math.max(0, at - 80), at + 120)
  }\n  floor:   …${b.slice(Math.max(0, at - 80), at + 120)}`
}

/** Problems, if any, between the statements of the service and of the floor (same text, same parameters, in order). */
export const statementDifferences = (
  service: ReadonlyArray<TracedStatement>,
  floor: ReadonlyArray<TracedStatement>
) => {
  const problems: Array<string> = []
  if (service.length !== floor.length || service.length === 0) {
    problems.push(`service sent ${service.length} statements, floor ${floor.length}`)
  }
  service.forEach((st, i) => {
    const other = floor[i]
    if (!other) return
    if (normalizeSql(st.text) !== normalizeSql(other.text)) {
      problems.push(
        `statement ${i + 1} differs:\n  service: ${normalizeSql(st.text)}\n  floor:   ${normalizeSql(other.text)}`
      )
    } else if (JSON.stringify(st.values) !== JSON.stringify(other.values)) {
      problems.push(
        `statement ${i + 1} parameters differ: service ${JSON.stringify(st.values)}, floor ${
          JSON.stringify(other.values)
        }`
      )
    }
  })
  return problems
}
