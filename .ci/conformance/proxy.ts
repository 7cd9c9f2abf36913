/**
 * The MCP conformance suite's server scenarios speak to an unauthenticated server; ours is an OAuth
 * protected resource. This loopback proxy signs in once through the real OAuth flow (registration,
 * PKCE, a demo person's sign-in and consent over the HTML forms, token: test/support/oauthFlow.ts)
 * and adds that bearer token to every request it forwards to the service. Everything else (method,
 * path, Host, Origin, MCP headers, body, the streamed answer) passes through untouched, so the
 * service's own Host/Origin and header validation is what the suite sees. The token is never printed.
 *
 * Use: node --import tsx .ci/conformance/proxy.ts BASE_URL LISTEN_PORT DEMO_JSON
 * Prints `proxy ready on http://127.0.0.1:PORT/mcp` once it listens.
 */
import { readFileSync } from "node:fs"
import http from "node:http"
import { connectAssistantAsync } from "../../test/support/oauthFlow.js"

const [base, port, demoFile] = process.argv.slice(2)
if (!base || !port || !demoFile) throw new Error("usage: proxy.ts BASE_URL LISTEN_PORT DEMO_JSON")

const demo = JSON.parse(readFileSync(demoFile, "utf8")) as {
  mcp: { users: Array<{ email: string; password: string }> }
}
const person = demo.mcp.users[0]!
const connected = await connectAssistantAsync(base, person)
const token = connected.tokens.access_token
await connected.close()

const target = new URL(base)
const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` }
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    }
  )
  upstream.on("error", (error) => {
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
    res.end(`proxy: ${error.message}`)
  })
  req.pipe(upstream)
})
server.listen(Number(port), "127.0.0.1", () => {
  console.log(`proxy ready on http://127.0.0.1:${port}/mcp (signed in as ${person.email})`)
})
const stop = () => server.close(() => process.exit(0))
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
