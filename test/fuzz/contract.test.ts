/**
 * The contract fuzzer (issue 18 item 4): requests generated from the served documents of the partner
 * API and quickbook, valid and broken in one place each, with every kind of key, against the real
 * server on a fresh database with the sandboxes. Whatever is asked: never a 5xx, never a hang, every
 * 4xx the API's error body, every 2xx valid against the document; and every operation and tool
 * answers a valid request with a 2xx (a result) at least once (./world.ts). A short fixed-seed campaign here
 * (CI); `npm run fuzz` runs a long one (FUZZ_RUNS requests per API, default 10,000; FUZZ_SEED).
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectAssistant, rpc, setPassword } from "../support/assistant.js"
import { ALL_SCOPES } from "../support/fixtures.js"
import { paymentsEnv } from "../support/payments.js"
import { TestServer } from "../support/server.js"
import { printReport, type Report, runCampaign } from "./campaign.js"
import type { ErrorStyle } from "./oracle.js"
import { runToolsCampaign } from "./tools.js"
import { fuzzWorld } from "./world.js"

const RUNS = Number(process.env.FUZZ_RUNS ?? 300)
const SEED = Number(process.env.FUZZ_SEED ?? 20261127)
/** Long campaigns run for minutes; the short one well under one. */
const TIMEOUT = Math.max(120_000, RUNS * 100)

const env = paymentsEnv(Effect.succeed({
  // The fuzzer sends thousands of requests a minute with one key: limits would answer most of them 429.
  RATE_LIMIT_PER_MINUTE: "1000000",
  PUBLISHABLE_RATE_LIMIT_PER_MINUTE: "1000000",
  ANALYTICS_COLLECT_PER_MINUTE: "1000000",
  TOUR_AVAILABILITY_TIMEOUT_MS: "1500"
}))

/**
 * Operations (tools) the campaign may leave without a 2xx (a result), each with its reason; every
 * other one must succeed at least once, else its handler's success path went unfuzzed.
 */
const NEVER_2XX: Record<"partner" | "quickbook" | "tools", ReadonlyArray<string>> = {
  partner: [],
  quickbook: [],
  tools: []
}

/** The document served at `path`, every `$ref` resolved. */
const spec = async (baseUrl: string, path: string) =>
  SwaggerParser.dereference(await (await fetch(baseUrl + path)).json() as any)

/** The findings as the test shows them: each with its first request and answer. */
const shown = (report: Report) => report.findings.map((f) => `${f.what}\n  ${f.request}\n  ${f.answer}`)

/** A campaign on one API's served document, with the world's keys and ids for it. */
const apiCampaign = (name: "partner" | "quickbook", documentPath: string, style: ErrorStyle) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const world = yield* fuzzWorld
    const report = yield* Effect.promise(async () =>
      runCampaign({
        name,
        spec: await spec(baseUrl, documentPath),
        style,
        baseUrl,
        keys: name === "partner" ? world.partnerKeys : world.quickbookKeys,
        pool: name === "partner" ? world.partnerPool : world.quickbookPool,
        perOperation: name === "partner" ? world.partnerOperations : world.quickbookOperations,
        learn: name === "partner" ? world.learnPartner : world.learnQuickbook,
        seed: SEED,
        runs: RUNS
      })
    )
    printReport(report)
    expect(report.requests).toBe(RUNS)
    // A campaign that never got past authentication or validation would prove little.
    expect(report.byStatus["200"] ?? 0).toBeGreaterThan(RUNS / 20)
    expect(shown(report)).toEqual([])
    // Every operation's success path ran: valid requests of each got a 2xx at least once.
    expect(report.never2xx).toEqual(NEVER_2XX[name])
  })

layer(env, { excludeTestServices: true, timeout: TIMEOUT })("contract fuzzer", (it) => {
  it.effect(
    "partner API: no 5xx, no hang, problem+json for every 4xx, every 2xx as documented",
    () => apiCampaign("partner", "/api/v1/openapi.json", "problem"),
    TIMEOUT
  )

  it.effect(
    "quickbook: no 5xx, no hang, {error:{code,clerkMessage}} for every 4xx, every 2xx as documented",
    () => apiCampaign("quickbook", "/api/quickbook/v1/openapi.json", "quickbook"),
    TIMEOUT
  )

  it.scoped(
    "MCP tools: no 5xx, no hang, no internal error, tool errors as problems, results as documented",
    () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* TestServer
        const world = yield* fuzzWorld
        yield* setPassword(world.ownerEmail, "correct horse battery")
        const connected = yield* connectAssistant(baseUrl, {
          email: world.ownerEmail,
          password: "correct horse battery",
          operatorIds: [world.partnerPool.partner_id![0] as string],
          scopes: [...ALL_SCOPES]
        })
        const report = yield* Effect.promise(() =>
          runToolsCampaign({
            mcpUrl: `${baseUrl}/mcp`,
            tokens: { good: connected.tokens.access_token, none: undefined, wrong: "not-a-token" },
            pool: world.partnerPool,
            perTool: world.toolPools,
            seed: SEED,
            runs: RUNS,
            rpc
          })
        )
        printReport(report)
        expect(report.byStatus["200 result"] ?? 0).toBeGreaterThan(RUNS / 20)
        expect(shown(report)).toEqual([])
        expect(report.never2xx).toEqual(NEVER_2XX.tools)
      }),
    TIMEOUT
  )
})
