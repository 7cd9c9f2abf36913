/**
 * The MCP conformance suite's authorization-server scenarios (RFC 8414 metadata, the authorization
 * code grant) against the service's own authorization server, with a real browser on our pages.
 *
 * The suite prints an authorization URL and waits for the redirect on its own callback server
 * (http://127.0.0.1:PORT/callback). So this script registers a public client for that redirect URI
 * (RFC 7591), runs the suite, and when the URL appears drives Debian's chromium (playwright-core):
 * a demo person signs in and allows the connection on the consent page as a person would (the forms'
 * CSRF tokens and cookies are the browser's own); the browser follows the redirect to the suite's
 * callback, and the suite exchanges the code and checks the answers. Exits with the suite's status.
 *
 * Use: node --import tsx .ci/conformance/authorization.ts BASE_URL CALLBACK_PORT DEMO_JSON OUT_DIR -- NODE22 CLI.js
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { chromium } from "playwright-core"
import { registerPublicClient } from "../../test/support/oauthFlow.js"

const separator = process.argv.indexOf("--")
const [base, port, demoFile, outDir] = process.argv.slice(2, separator)
const suite = process.argv.slice(separator + 1)
if (separator < 0 || !base || !port || !demoFile || !outDir || suite.length === 0) {
  throw new Error("usage: authorization.ts BASE_URL CALLBACK_PORT DEMO_JSON OUT_DIR -- NODE CLI.js")
}
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const demo = JSON.parse(readFileSync(demoFile, "utf8")) as {
  mcp: { users: Array<{ email: string; password: string }> }
}
const person = demo.mcp.users[0]!
const redirectUri = `http://127.0.0.1:${port}/callback`

const registration = await registerPublicClient(base, "MCP conformance suite", redirectUri)
if (registration.status !== 201) throw new Error(`registration answered ${registration.status}`)
const { client_id: clientId } = await registration.json() as { client_id: string }
const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json() as {
  authorization_endpoint: string
}

/** Signs in and allows the connection in chromium; resolves once the browser reached the callback. */
const consentInBrowser = async (authorizationUrl: string) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  try {
    const page = await browser.newPage()
    await page.goto(authorizationUrl)
    await page.fill("input[name=email]", person.email)
    await page.fill("input[name=password]", person.password)
    await Promise.all([page.waitForURL(/\/oauth\/interaction\//), page.click("button:text('Sign in')")])
    await page.waitForSelector("form[action$='/consent']")
    await Promise.all([
      page.waitForURL((url) => url.toString().startsWith(redirectUri)),
      page.click("form[action$='/consent'] button[type=submit]")
    ])
    console.log(`browser: ${person.email} signed in and allowed the connection; back at the suite's callback`)
  } finally {
    await browser.close()
  }
}

const child = spawn(
  suite[0]!,
  [...suite.slice(1), "authorization", "--url", base, "--client-id", clientId, "--port", port, "-o", outDir],
  { stdio: ["ignore", "pipe", "inherit"] }
)
let browsing: Promise<void> | undefined
let pending = ""
child.stdout.on("data", (chunk: Buffer) => {
  process.stdout.write(chunk)
  pending += chunk.toString()
  const lines = pending.split("\n")
  pending = lines.pop() ?? ""
  for (const line of lines) {
    if (browsing === undefined && line.startsWith(`${metadata.authorization_endpoint}?`)) {
      browsing = consentInBrowser(line.trim()).catch((error) => {
        console.error(`browser: the sign-in and consent failed: ${error}`)
        child.kill("SIGTERM")
      })
    }
  }
})
const code = await new Promise<number>((resolve) => child.on("exit", (status) => resolve(status ?? 1)))
await browsing
if (browsing === undefined) console.error("the suite printed no authorization URL")
process.exit(browsing === undefined ? 1 : code)
