/**
 * A campaign: `runs` requests generated from a document with seed `seed` (fast-check), sent over
 * real HTTP a few at a time, each answer judged by the oracle; counts by status and every distinct
 * violation with its first request and answer.
 */
import fc from "fast-check"
import { type Answer, type ErrorStyle, violation } from "./oracle.js"
import { type FuzzRequest, type Keys, type Operation, operations, requestFor } from "./requests.js"
import type { Pool } from "./schemaValues.js"

export interface CampaignInput {
  readonly name: string
  readonly spec: any
  readonly style: ErrorStyle
  readonly baseUrl: string
  readonly keys: Keys
  readonly pool: Pool
  readonly seed: number
  readonly runs: number
  /** What one operation (by "METHOD template") is asked with on top of `pool`: its own values and headers. */
  readonly perOperation?: Readonly<Record<string, OperationWorld>>
  /** Told every 2xx answer's JSON body, to add what it returned (a reference, a link) to the pools. */
  readonly learn?: (operation: string, body: unknown, request: FuzzRequest) => void
  /** Operations left out (e.g. the reference pages), by "METHOD template". */
  readonly skip?: ReadonlyArray<string>
  readonly timeoutMs?: number
  readonly concurrency?: number
}

export interface OperationWorld {
  readonly pool?: Pool
  readonly headers?: Readonly<Record<string, string>>
}

export interface Finding {
  readonly what: string
  count: number
  readonly request: string
  readonly answer: string
}

export interface Report {
  readonly name: string
  readonly seed: number
  readonly requests: number
  readonly byStatus: Record<string, number>
  readonly findings: Array<Finding>
  /** Operations (or tools) no request got a 2xx (a result) from: their handlers' success went unexercised. */
  readonly never2xx?: ReadonlyArray<string>
  /** For each of those, the last answer to a valid request with the good key: why it did not succeed. */
  readonly lastRefusal?: Readonly<Record<string, string>>
}

const send = async (base: string, r: FuzzRequest, timeoutMs: number): Promise<Answer | "hang" | "refused"> => {
  try {
    const res = await fetch(base + r.path, {
      method: r.method,
      headers: r.headers,
      ...(r.body !== undefined ? { body: r.body } : {}),
      signal: AbortSignal.timeout(timeoutMs)
    })
    const text = await res.text()
    return { status: res.status, type: (res.headers.get("content-type") ?? "").split(";")[0]!.trim(), text }
  } catch (e) {
    if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) return "hang"
    // The client itself refuses some requests (a header with a newline): nothing reached the server.
    if (e instanceof TypeError && !/fetch failed/.test(e.message)) return "refused"
    const cause = (e as any)?.cause
    return cause?.code === "UND_ERR_INVALID_ARG" ? "refused" : { status: 599, type: "", text: String(cause ?? e) }
  }
}

const describeRequest = (r: FuzzRequest) =>
  `${r.method} ${r.path.slice(0, 300)} [${r.mutation}; key ${r.key}] ${
    JSON.stringify({ ...r.headers, authorization: r.headers.authorization ? "Bearer …" : undefined })
  } ${(r.body ?? "").slice(0, 300)}`

const learnFrom = (learn: NonNullable<CampaignInput["learn"]>, operation: string, text: string, r: FuzzRequest) => {
  try {
    learn(operation, JSON.parse(text), r)
  } catch {
    // Not JSON: the oracle reports it.
  }
}

export const runCampaign = async (input: CampaignInput): Promise<Report> => {
  const skip = new Set(input.skip ?? [])
  const ops = operations(input.spec).filter((o) => !skip.has(`${o.method.toUpperCase()} ${o.template}`))
  const nameOf = (o: Operation) => `${o.method.toUpperCase()} ${o.template}`
  const goodKey = Object.keys(input.keys)[0]
  const arb = fc.oneof(...ops.map((o) => {
    const own = input.perOperation?.[nameOf(o)]
    return requestFor(o, input.keys, { ...input.pool, ...own?.pool }, own?.headers)
  }))
  // One request at a time from seed + index: the same campaign for a seed, without holding it all in memory.
  const requestAt = (i: number) => fc.sample(arb, { seed: input.seed + i, numRuns: 1 })[0]!
  const byStatus: Record<string, number> = {}
  const findings = new Map<string, Finding>()
  const note = (r: FuzzRequest, what: string, answer: string) => {
    const id = `${r.method} ${r.operation.template}: ${what}`
    const seen = findings.get(id)
    if (seen) seen.count++
    else findings.set(id, { what: id, count: 1, request: describeRequest(r), answer: answer.slice(0, 500) })
  }
  const succeeded = new Set<Operation>()
  const lastRefusal: Record<string, string> = {}
  let next = 0
  const worker = async () => {
    while (next < input.runs) {
      const r = requestAt(next++)
      const answer = await send(input.baseUrl, r, input.timeoutMs ?? 10_000)
      const status = typeof answer === "string" ? answer : String(answer.status)
      byStatus[status] = (byStatus[status] ?? 0) + 1
      if (typeof answer !== "string" && answer.status < 300) {
        succeeded.add(r.operation)
        if (input.learn && answer.type.includes("json")) learnFrom(input.learn, nameOf(r.operation), answer.text, r)
      } else if (typeof answer !== "string" && r.mutation === "valid" && r.key === goodKey) {
        lastRefusal[nameOf(r.operation)] = `${answer.status} ${answer.text.slice(0, 300)}`
      }
      if (answer === "hang") note(r, "no answer in time", "")
      else if (answer !== "refused") {
        const wrong = violation(r.operation, input.style, answer)
        if (wrong) note(r, wrong, `${answer.status} ${answer.type} ${answer.text}`)
      }
    }
  }
  await Promise.all(Array.from({ length: input.concurrency ?? 4 }, worker))
  return {
    name: input.name,
    seed: input.seed,
    requests: input.runs,
    byStatus,
    findings: [...findings.values()],
    never2xx: ops.filter((o) => !succeeded.has(o)).map(nameOf),
    lastRefusal: Object.fromEntries(
      ops.filter((o) => !succeeded.has(o)).map(nameOf).flatMap((n) => lastRefusal[n] ? [[n, lastRefusal[n]]] : [])
    )
  }
}

export const printReport = (r: Report) => {
  const statuses = Object.entries(r.byStatus).sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}: ${n}`)
  const lines = [
    `fuzz ${r.name}: ${r.requests} requests, seed ${r.seed} (FUZZ_SEED=${r.seed} to replay)`,
    `  by status: ${statuses.join(", ")}`,
    ...(r.never2xx?.length ? [`  never a 2xx (a tool: never a result): ${r.never2xx.join(", ")}`] : []),
    ...Object.entries(r.lastRefusal ?? {}).map(([op, answer]) => `    ${op}, last valid request: ${answer}`),
    `  findings: ${r.findings.length}`,
    ...r.findings.map((f) => `  - ${f.what} (×${f.count})\n      request: ${f.request}\n      answer: ${f.answer}`)
  ]
  console.log(lines.join("\n"))
}
