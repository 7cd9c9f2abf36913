import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { connectAssistant, setPassword } from "../support/assistant.js"
import { makeWorld } from "../support/fixtures.js"
import { TestServer, testServer } from "../support/server.js"

const PASSWORD = "correct horse battery"

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("MCP: connecting", (it) => {
  describe("the official client after the OAuth flow", () => {
    it.scoped("signs in, consents, lists the tools and calls me", () =>
      Effect.gen(function*() {
        const w = yield* makeWorld
        const { baseUrl } = yield* TestServer
        yield* setPassword(`bob-${w.tag}@example.com`, PASSWORD)
        const a = yield* connectAssistant(baseUrl, {
          email: `bob-${w.tag}@example.com`,
          password: PASSWORD,
          operatorIds: [w.alpha]
        })
        const tools = yield* Effect.promise(() => a.client.listTools())
        expect(tools.tools.map((t) => t.name)).toContain("me")
        const me = yield* Effect.promise(() => a.client.callTool({ name: "me", arguments: {} }))
        expect(me.isError, JSON.stringify(me)).toBeFalsy()
        expect((me.structuredContent as any).partners.map((p: any) => p.id)).toEqual([w.alpha])
      }))
  })
})
