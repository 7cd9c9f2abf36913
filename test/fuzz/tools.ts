/**
 * The MCP server's tools fuzzed from their input schemas (tools/list): `tools/call` with arguments
 * valid, broken in one field, missing or of the wrong shape, an unknown tool, with the connection's
 * token, none or a wrong one. Oracle: never a 5xx or a hang, never a JSON-RPC internal error; a tool
 * error is a problem body with a 4xx status; a result valid against the tool's output schema.
 */
import addFormats from "ajv-formats"
import Ajv2020 from "ajv/dist/2020.js"
import fc from "fast-check"
import type { Finding, Report } from "./campaign.js"
import { broken, named, type Pool } from "./schemaValues.js"

const ajv = new (Ajv2020 as any)({ strict: false, allErrors: true })
;(addFormats as any)(ajv)

interface Tool {
  readonly name: string
  readonly inputSchema: Record<string, any>
  readonly outputSchema?: Record<string, any>
}

interface Call {
  readonly tool: string
  readonly args: unknown
  readonly token: string
  readonly mutation: string
}

const callArb = (
  tools: ReadonlyArray<Tool>,
  tokens: Readonly<Record<string, string | undefined>>,
  pool: Pool,
  perTool: Readonly<Record<string, Pool>>
) => {
  const tokenArb = fc.oneof(
    { weight: 8, arbitrary: fc.constant(Object.keys(tokens)[0]!) },
    { weight: 1, arbitrary: fc.constantFrom(...Object.keys(tokens)) }
  )
  return fc.oneof(
    ...tools.map((t) => {
      const fields = Object.keys(t.inputSchema.properties ?? {})
      return fc.tuple(
        named("", t.inputSchema, { ...pool, ...perTool[t.name] }),
        tokenArb,
        fc.nat(),
        broken(undefined),
        fc.nat(9)
      ).map(
        ([args, token, n, wrong, kind]): Call => {
          if (kind < 4 || typeof args !== "object" || args === null) {
            return { tool: t.name, args, token, mutation: "valid" }
          }
          if (kind === 9) return { tool: t.name, args: wrong, token, mutation: "arguments of the wrong shape" }
          if (kind === 8) return { tool: `${t.name}_nope`, args, token, mutation: "unknown tool" }
          if (fields.length === 0) {
            return { tool: t.name, args: { unexpected: wrong }, token, mutation: "unknown field" }
          }
          const field = fields[n % fields.length]!
          const changed: Record<string, unknown> = { ...(args as object) }
          if (kind === 7) delete changed[field]
          else changed[field] = wrong
          return { tool: t.name, args: changed, token, mutation: `field ${field} ${kind === 7 ? "missing" : "broken"}` }
        }
      )
    })
  )
}

/** What is wrong with the answer to `call` (undefined: nothing). */
const violation = (tool: Tool | undefined, status: number, json: any): string | undefined => {
  if (status >= 500) return `${status}`
  if (status !== 200) return undefined // the token's challenges (401, 403) and refusals of the request
  if (json?.error) return json.error.code === -32603 ? `JSON-RPC internal error: ${json.error.message}` : undefined
  const result = json?.result
  if (!result) return "neither result nor error"
  if (result.isError) {
    const p = result.structuredContent
    if (!p) return undefined // the SDK's own refusals (an unknown tool, arguments not an object) carry text only
    if (typeof p.status !== "number" || p.status >= 500) return `tool error status ${p.status}`
    if (typeof p.type !== "string" || typeof p.title !== "string") return "tool error not a problem body"
    return undefined
  }
  if (tool?.outputSchema) {
    const validate = ajv.compile(tool.outputSchema)
    if (!validate(result.structuredContent)) return `result against outputSchema: ${ajv.errorsText(validate.errors)}`
  }
  return undefined
}

export const runToolsCampaign = async (input: {
  readonly mcpUrl: string
  readonly tokens: Readonly<Record<string, string | undefined>>
  readonly pool: Pool
  /** A tool's own values on top of `pool` (by tool name; "" holds whole argument objects). */
  readonly perTool?: Readonly<Record<string, Pool>>
  readonly seed: number
  readonly runs: number
  readonly rpc: (url: string, token: string | undefined, body: unknown) => Promise<{ status: number; json: any }>
}): Promise<Report> => {
  const first = Object.values(input.tokens)[0]
  const listed = await input.rpc(input.mcpUrl, first, { jsonrpc: "2.0", id: 0, method: "tools/list", params: {} })
  const tools: Array<Tool> = listed.json.result.tools
  const arb = callArb(tools, input.tokens, input.pool, input.perTool ?? {})
  const succeeded = new Set<string>()
  const lastRefusal: Record<string, string> = {}
  const byStatus: Record<string, number> = {}
  const findings = new Map<string, Finding>()
  for (let i = 0; i < input.runs; i++) {
    const c = fc.sample(arb, { seed: input.seed + i, numRuns: 1 })[0]!
    const body = { jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: c.tool, arguments: c.args } }
    const answer = await Promise.race([
      input.rpc(input.mcpUrl, input.tokens[c.token], body),
      new Promise<"hang">((resolve) => setTimeout(() => resolve("hang"), 10_000).unref())
    ]).catch((e) => ({ status: 599, json: { error: { code: -32603, message: String(e) } } }))
    const status = answer === "hang"
      ? "hang"
      : answer.status !== 200
      ? String(answer.status)
      : answer.json?.error
      ? "200 JSON-RPC error"
      : answer.json?.result?.isError
      ? "200 tool error"
      : "200 result"
    byStatus[status] = (byStatus[status] ?? 0) + 1
    if (status === "200 result") succeeded.add(c.tool)
    else if (answer !== "hang" && c.mutation === "valid" && c.token === Object.keys(input.tokens)[0]) {
      lastRefusal[c.tool] = `${status} ${JSON.stringify(answer.json).slice(0, 300)}`
    }
    const wrong = answer === "hang"
      ? "no answer in time"
      : violation(tools.find((t) => t.name === c.tool), answer.status, answer.json)
    if (wrong) {
      const id = `${c.tool}: ${wrong}`
      const seen = findings.get(id)
      if (seen) seen.count++
      else {
        findings.set(id, {
          what: id,
          count: 1,
          request: `tools/call ${c.tool} [${c.mutation}; token ${c.token}] ${JSON.stringify(c.args).slice(0, 300)}`,
          answer: answer === "hang" ? "" : JSON.stringify(answer.json).slice(0, 500)
        })
      }
    }
  }
  const never = tools.map((t) => t.name).filter((name) => !succeeded.has(name))
  return {
    name: "mcp tools",
    seed: input.seed,
    requests: input.runs,
    byStatus,
    findings: [...findings.values()],
    never2xx: never,
    lastRefusal: Object.fromEntries(never.flatMap((n) => lastRefusal[n] ? [[n, lastRefusal[n]]] : []))
  }
}
