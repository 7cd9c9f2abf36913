/**
 * The assistant's real OAuth flow for tests (./oauthFlow.ts: registration, PKCE, sign-in and consent
 * over the HTML forms, token, connect with the official MCP client), as scoped Effects, plus raw
 * calls to the MCP and token endpoints. `connectAssistant` returns the connected client, its tokens
 * and what it registered.
 */
import type { ClientOptions } from "@modelcontextprotocol/client"
import { Effect } from "effect"
import { AssistantAdmin } from "../../src/assistant/oauth/AssistantAdmin.js"
import { connectAssistantAsync, type Person } from "./oauthFlow.js"

export * from "./oauthFlow.js"

/** The flow as a scoped Effect; `options` for the connected client (e.g. `versionNegotiation`). */
export const connectAssistant = (base: string, person: Person, options: ClientOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => connectAssistantAsync(base, person, options)),
    (connected) => Effect.promise(() => connected.close().catch(() => undefined))
  )

/** Gives a person a password (as `npm run cli -- assistant set-password` does). */
export const setPassword = (email: string, password: string) =>
  Effect.flatMap(AssistantAdmin, (admin) => admin.setPassword(email, password)).pipe(
    Effect.provide(AssistantAdmin.Default),
    Effect.orDie
  )

/** A raw JSON-RPC POST to the MCP endpoint (protocol 2025-11-25 unless a header says otherwise). */
export const rpc = async (
  mcpUrl: string,
  token: string | undefined,
  body: unknown,
  headers: Record<string, string> = {}
) => {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers
    },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  let json: any = undefined
  try {
    json = JSON.parse(text)
  } catch {
    // An SSE body: the last `data:` line.
    const data = text.split("\n").filter((l) => l.startsWith("data:")).pop()
    if (data) json = JSON.parse(data.slice(5))
  }
  return { status: res.status, headers: res.headers, text, json }
}

export const toolsList = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }
export const callMe = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "me", arguments: {} } }

/** A token request (refresh, or any other grant) as the client would send it. */
export const tokenRequest = async (base: string, params: Record<string, string>) => {
  const res = await fetch(`${base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString()
  })
  return { status: res.status, json: await res.json() as any }
}
