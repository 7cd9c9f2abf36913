/**
 * Every HTML page the service serves carries the security headers (issue 17 item 12;
 * src/http/securityHeaders.ts): the two API references, our sign-in pages and the authorization
 * server's own pages. The references' CSP allows exactly their inline scripts (by hash), and the
 * partner reference renders in headless Chromium with no CSP violation.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { inlineScriptHashes } from "../../src/http/securityHeaders.js"
import { browser } from "../support/browser.js"
import { TestServer, testServer } from "../support/server.js"

const expectPageHeaders = (res: Response) => {
  expect(res.headers.get("content-type")).toContain("text/html")
  expect(res.headers.get("x-content-type-options")).toBe("nosniff")
  expect(res.headers.get("referrer-policy")).toBe("no-referrer")
  expect(res.headers.get("x-frame-options")).toBe("DENY")
  const csp = res.headers.get("content-security-policy") ?? ""
  expect(csp).toContain("frame-ancestors 'none'")
  expect(csp).toMatch(/default-src '(self|none)'/)
  // Never inline script in general.
  expect(/script-src[^;]*'unsafe-inline'/.test(csp)).toBe(false)
  return csp
}

const fetchPage = (url: string) => Effect.promise(() => fetch(url, { redirect: "manual" }))

layer(testServer(), { excludeTestServices: true, timeout: 120_000 })("security headers of HTML pages", (it) => {
  it.effect("the API references: headers, and a CSP naming exactly the page's inline scripts", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      for (const path of ["/api/v1/docs", "/api/quickbook/v1/docs"]) {
        const res = yield* fetchPage(baseUrl + path)
        expect(res.status, path).toBe(200)
        const csp = expectPageHeaders(res)
        const html = yield* Effect.promise(() => res.text())
        const hashes = inlineScriptHashes(html)
        // The configuration script and the Scalar bundle (the JSON document is not a script).
        expect(hashes.length, path).toBe(2)
        const scriptSrc = /script-src ([^;]*)/.exec(csp)?.[1]
        expect(scriptSrc).toBe(["'self'", "'wasm-unsafe-eval'", ...hashes.map((h) => `'${h}'`)].join(" "))
      }
      // JSON and markdown are left alone.
      const json = yield* fetchPage(`${baseUrl}/api/v1/openapi.json`)
      expect(json.headers.get("content-security-policy")).toBeNull()
    }))

  it.effect("the sign-in pages and the authorization server's own pages", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      // Our page: an interaction this browser is not in.
      const ours = yield* fetchPage(`${baseUrl}/oauth/interaction/nope`)
      expect(ours.status).toBeGreaterThanOrEqual(400)
      expectPageHeaders(ours)
      // oidc-provider's error page: an authorization request of an unknown client.
      const theirs = yield* fetchPage(`${baseUrl}/oauth/authorize?client_id=nobody&response_type=code`)
      expect(theirs.status).toBe(400)
      expectPageHeaders(theirs)
    }))

  it.scoped("the partner reference renders in Chromium without a CSP violation", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const b = yield* browser
      const result = yield* Effect.promise(async () => {
        const page = await b.newPage()
        const violations: Array<string> = []
        page.on("console", (m) => {
          if (/Content Security Policy/i.test(m.text())) violations.push(m.text())
        })
        await page.addInitScript(
          "document.addEventListener('securitypolicyviolation', (e) => console.error(" +
            "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
        )
        await page.goto(`${baseUrl}/api/v1/docs`)
        // Scalar renders the document: the operations' summaries appear.
        await page.getByText("The key and the operators it acts for", { exact: false }).first().waitFor({
          timeout: 30_000
        })
        // Scalar renders in steps: read the page until the rest is there too, not only the first
        // summary (read from here, polling: the page's CSP refuses the string evaluation of waitForFunction).
        let text = await page.locator("body").innerText()
        for (const deadline = Date.now() + 30_000; text.length <= 1000 && Date.now() < deadline;) {
          await new Promise((resolve) => setTimeout(resolve, 200))
          text = await page.locator("body").innerText()
        }
        await page.close()
        return { violations, text }
      })
      // The one refusal allowed: eval, which a bundled library only probes for (`try { new Function("") }`,
      // zod's JIT check) and does without. Scripts, WebAssembly, styles and requests are all allowed.
      const probe = (v: string) => / script-src eval$/.test(v) || /evaluate a string as JavaScript/.test(v)
      expect(result.violations.filter((v) => !probe(v))).toEqual([])
      expect(result.text.length).toBeGreaterThan(1000)
    }))
})
