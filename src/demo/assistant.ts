/**
 * The demo's people who sign in to the assistant-facing MCP server (issue 16; docs/assistant.md):
 * Ingrid (owner of one operator) and Ola (owner of one, admin of another), with demo passwords set
 * once (a password changed with the CLI stays), listed in demo.json as `mcp: { url, users }` with
 * the MCP URL of this start.
 */
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import { hashPassword } from "../assistant/oauth/password.js"
import { SignInRepo } from "../assistant/oauth/SignInRepo.js"

export const DEMO_ASSISTANT_USERS = [
  { email: "ingrid@fjordexplorer.no", password: "fjord-demo-ingrid" },
  { email: "ola@arcticwhale.no", password: "arctic-demo-ola" }
] as const

export const setUpDemoAssistant = (file: string, mcpUrl: string) =>
  Effect.gen(function*() {
    const users = yield* SignInRepo
    const listed = []
    for (const demo of DEMO_ASSISTANT_USERS) {
      const user = yield* users.userByEmail(demo.email)
      if (Option.isNone(user)) continue
      if (user.value.password_hash === null) {
        const hash = yield* Effect.promise(() => hashPassword(demo.password))
        yield* users.setPasswordHash({ email: demo.email, hash })
      }
      const operators = yield* users.managedOperators(user.value.id)
      listed.push({
        email: demo.email,
        password: demo.password,
        operators: operators.map((o) => ({ id: o.id, name: o.name, role: o.role })),
        role: [...new Set(operators.map((o) => o.role))].join(" and ")
      })
    }
    if (!fs.existsSync(file)) return
    const current = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
    const mcp = {
      url: mcpUrl,
      note: "Point an MCP client (Claude Desktop, the MCP Inspector) at url and sign in as one of these people " +
        "(docs/assistant.md). Passwords: `npm run cli -- assistant set-password --user EMAIL`.",
      users: listed
    }
    if (JSON.stringify(current.mcp) === JSON.stringify(mcp)) return
    fs.writeFileSync(file, JSON.stringify({ ...current, mcp }, null, 2) + "\n", { mode: 0o600 })
  }).pipe(Effect.provide(SignInRepo.Default))
