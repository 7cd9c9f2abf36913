/**
 * The served Partner API document makes working clients (issue 18 item 3): one generated with
 * `openapi-typescript` (types, called through `openapi-fetch`) and one with `@hey-api/openapi-ts`
 * (types and an SDK, one function per operation id). Both are generated from the document the
 * test server serves, compiled with the TypeScript compiler (strict, a misspelt operation must not
 * compile), and each makes one call to the test server with a real key.
 */
import { expect, layer } from "@effect/vitest"
import { createClient as heyApi } from "@hey-api/openapi-ts"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import openapiTS, { astToString } from "openapi-typescript"
import ts from "typescript"
import { createKey, makeWorld } from "../support/fixtures.js"
import { get } from "../support/http.js"
import { TestServer, testServer } from "../support/server.js"

/** Under the project (git-ignored), so the generated code resolves the project's packages. */
const OUT = path.resolve(".openapi", "clients", `run-${process.pid}`)

/** The consumer of the openapi-typescript types: `paths` typed through openapi-fetch. */
const OPENAPI_TYPESCRIPT_USE = `
import createClient from "openapi-fetch"
import type { paths } from "./partner"

export const firstPartnerName = async (baseUrl: string, key: string): Promise<string> => {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } })
  const { data, error } = await client.GET("/api/v1/me")
  if (error !== undefined) throw new Error(error.detail)
  return data.partners[0]!.name
}

export const misspelt = (client: ReturnType<typeof createClient<paths>>) =>
  // @ts-expect-error: no such path in the document
  client.GET("/api/v1/mee")
`

/** The consumer of the hey-api SDK: functions named by operation id. */
const HEY_API_USE = `
import { createClient } from "./hey-api/client"
import { getMe, listBookings } from "./hey-api"

export const firstPartnerName = async (baseUrl: string, key: string): Promise<string> => {
  const client = createClient({ baseUrl, auth: () => key })
  const { data, error } = await getMe({ client })
  if (error !== undefined) throw new Error(error.detail)
  const page = await listBookings({ client, query: { limit: 1 }, throwOnError: true })
  const bookings: number = page.data.data.length
  return \`\${data!.partners[0]!.name} \${bookings}\`
}

// @ts-expect-error: operation ids are the document's, not the handlers' (\`me.me\`)
export { meMe } from "./hey-api"
`

const compile = (files: ReadonlyArray<string>) => {
  const program = ts.createProgram([...files], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
    types: []
  })
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("generated clients", (it) => {
  it.effect("generated with openapi-typescript and @hey-api/openapi-ts, they compile and call the API", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const document = (yield* get("/api/v1/openapi.json")).body
      const w = yield* makeWorld
      const key = yield* createKey({ by: w.alice, operators: [w.alpha], scopes: ["bookings:read"] })

      yield* Effect.promise(async () => {
        fs.rmSync(OUT, { recursive: true, force: true })
        fs.mkdirSync(OUT, { recursive: true })
        fs.writeFileSync(path.join(OUT, "partner.ts"), astToString(await openapiTS(structuredClone(document))))
        fs.writeFileSync(path.join(OUT, "partner.json"), JSON.stringify(document))
        await heyApi({
          input: path.join(OUT, "partner.json"),
          output: path.join(OUT, "hey-api"),
          plugins: ["@hey-api/client-fetch", "@hey-api/typescript", "@hey-api/sdk"],
          logs: { level: "silent" }
        })
        fs.writeFileSync(path.join(OUT, "useOpenapiTypescript.ts"), OPENAPI_TYPESCRIPT_USE)
        fs.writeFileSync(path.join(OUT, "useHeyApi.ts"), HEY_API_USE)
      })

      try {
        expect(compile([path.join(OUT, "useOpenapiTypescript.ts"), path.join(OUT, "useHeyApi.ts")])).toEqual([])

        const viaOpenapiFetch = yield* Effect.promise(() =>
          import(path.join(OUT, "useOpenapiTypescript.ts")).then((m) => m.firstPartnerName(baseUrl, key.token))
        )
        expect(viaOpenapiFetch).toBe(`Alpha Tours ${w.tag}`)
        const viaHeyApi = yield* Effect.promise(() =>
          import(path.join(OUT, "useHeyApi.ts")).then((m) => m.firstPartnerName(baseUrl, key.token))
        )
        expect(viaHeyApi).toBe(`Alpha Tours ${w.tag} 0`)
      } finally {
        fs.rmSync(OUT, { recursive: true, force: true })
      }
    }))
})
