/**
 * The security headers of every HTML page the service serves (issue 17 item 12): the API references
 * (/api/v1/docs, /api/quickbook/v1/docs: Scalar, one inline bundle), the sign-in and consent pages
 * and the authorization server's own pages. Added once for every response in src/Http.ts
 * (`withHtmlSecurityHeaders`) and in the authorization server's Koa app (`HTML_SECURITY_HEADERS`);
 * a header a page already sets (the sign-in pages' stricter CSP) is kept.
 *
 * The Content-Security-Policy allows the page's own inline scripts by their SHA-256 hash (computed
 * once per page body), never inline script in general, nor `eval` (only WebAssembly, which Scalar
 * compiles: 'wasm-unsafe-eval'); styles inline (Scalar injects them), fonts
 * from Scalar's font host, requests to this origin only, no framing, no plugins, no `<base>`.
 */
import { HttpServerResponse } from "@effect/platform"
import { createHash } from "node:crypto"

/** What every page gets besides its CSP. */
export const HTML_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY"
}

/** The CSP of a page whose inline scripts have these hashes (`'sha256-…'`). */
export const pageCsp = (scriptHashes: ReadonlyArray<string>) =>
  [
    "default-src 'self'",
    `script-src 'self' 'wasm-unsafe-eval'${scriptHashes.map((h) => ` '${h}'`).join("")}`,
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data: https://fonts.scalar.com",
    "img-src 'self' data: https:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'"
  ].join("; ")

/** Executable inline scripts (no `src`, no data type such as application/json). */
const INLINE_SCRIPT = /<script(\s[^>]*)?>([\s\S]*?)<\/script>/gi
const isExecutable = (attributes: string) => {
  if (/\ssrc\s*=/i.test(attributes)) return false
  const type = /\stype\s*=\s*["']?([^"'\s>]+)/i.exec(attributes)?.[1]?.toLowerCase()
  return type === undefined || type === "module" || type.endsWith("javascript")
}

/** The hashes of a page's inline scripts, as a CSP names them. */
export const inlineScriptHashes = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(INLINE_SCRIPT)]
    .filter(([, attributes = ""]) => isExecutable(attributes))
    .map(([, , body = ""]) => `sha256-${createHash("sha256").update(body, "utf8").digest("base64")}`)

/** Page bodies are built once (the references at start): their CSP is computed once per body. */
const cspByBody = new WeakMap<Uint8Array, string>()
const decoder = new TextDecoder()

const cspOf = (body: Uint8Array) => {
  let csp = cspByBody.get(body)
  if (csp === undefined) {
    csp = pageCsp(inlineScriptHashes(decoder.decode(body)))
    cspByBody.set(body, csp)
  }
  return csp
}

const isHtml = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? ("contentType" in response.body ? response.body.contentType : ""))
    .startsWith("text/html")

/** A response with the security headers when it is an HTML page (what it sets itself is kept); others as they are. */
export const withHtmlSecurityHeaders = (
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  if (!isHtml(response)) return response
  const missing: Record<string, string> = {}
  for (const [name, value] of Object.entries(HTML_SECURITY_HEADERS)) {
    if (response.headers[name.toLowerCase()] === undefined) missing[name] = value
  }
  if (response.headers["content-security-policy"] === undefined) {
    missing["Content-Security-Policy"] = response.body._tag === "Uint8Array"
      ? cspOf(response.body.body)
      : pageCsp([])
  }
  return HttpServerResponse.setHeaders(response, missing)
}
