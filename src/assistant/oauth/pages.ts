/**
 * The sign-in and consent pages of the assistant's authorization server: plain server-rendered HTML
 * that works without JavaScript, every shown value escaped, each form carrying its CSRF token, and
 * headers that forbid framing (clickjacking) and caching.
 */
import { HttpServerResponse } from "@effect/platform"
import { SCOPES } from "../../partner/auth/scopes.js"

export const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"'`]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;", "`": "&#96;" })[c]!
  )

/** What each scope lets the assistant do, as the consent page says it. */
export const SCOPE_LABELS: Record<(typeof SCOPES)[number], string> = {
  "bookings:read": "Read bookings",
  "manifest:read": "Read manifests (who is on each departure)",
  "guests.contact:read": "See guests' email addresses and phone numbers",
  "finance:read": "Read payouts, invoices and other finance data",
  "analytics:read": "Read tour and site analytics",
  "tours:read": "Read the tour catalogue",
  "checkins:write": "Check guests in (always after your confirmation)",
  "payment_links:write": "Send balance payment links (always after your confirmation)",
  "bookings.cancel:write": "Cancel bookings (always after your confirmation)",
  "bookings.reschedule:write": "Reschedule bookings (always after your confirmation)"
}

export const isReadScope = (scope: string) => scope.endsWith(":read")

const STYLE = `body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
label{display:block;margin:.4rem 0}input[type=email],input[type=password]{width:100%;padding:.5rem;font-size:1rem}
button{padding:.5rem 1.2rem;font-size:1rem;margin-top:1rem}fieldset{margin:1rem 0}.error{color:#a00}.muted{color:#555}`

const page = (title: string, body: string, status = 200) =>
  HttpServerResponse.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
      `content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style>` +
      `</head><body>${body}</body></html>`
  ).pipe(
    HttpServerResponse.setStatus(status),
    HttpServerResponse.setHeaders({
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      "X-Content-Type-Options": "nosniff"
    })
  )

export interface ClientShown {
  readonly name: string
  readonly redirectHost: string
}

const clientLine = (client: ClientShown) =>
  `<p><strong>${escapeHtml(client.name)}</strong> <span class="muted">(returns to ${
    escapeHtml(client.redirectHost)
  })</span> wants to connect to your tour operator account.</p>`

export const signInPage = (p: {
  readonly uid: string
  readonly csrf: string
  readonly client: ClientShown
  readonly email?: string
  readonly error?: string
  readonly status?: number
}) =>
  page(
    "Sign in",
    `<h1>Sign in</h1>${clientLine(p.client)}` +
      (p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : "") +
      `<form method="post" action="/oauth/interaction/${encodeURIComponent(p.uid)}/login">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">` +
      `<label>Email <input type="email" name="email" autocomplete="username" required value="${
        escapeHtml(p.email ?? "")
      }"></label>` +
      `<label>Password <input type="password" name="password" autocomplete="current-password" required></label>` +
      `<button type="submit">Sign in</button></form>` +
      `<form method="post" action="/oauth/interaction/${encodeURIComponent(p.uid)}/abort">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}"><button type="submit">Cancel</button></form>`,
    p.status
  )

export const consentPage = (p: {
  readonly uid: string
  readonly csrf: string
  readonly client: ClientShown
  readonly userEmail: string
  readonly operators: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: string }>
  /** Scopes ticked (read scopes, and any the client asked for). */
  readonly ticked: ReadonlySet<string>
  readonly error?: string
  readonly status?: number
}) =>
  page(
    "Connect an assistant",
    `<h1>Connect an assistant</h1>${clientLine(p.client)}<p>Signed in as ${escapeHtml(p.userEmail)}.</p>` +
      (p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : "") +
      (p.operators.length === 0
        ? `<p class="error">You are not an owner or admin of any operator, so there is nothing to connect.</p>`
        : `<form method="post" action="/oauth/interaction/${encodeURIComponent(p.uid)}/consent">` +
          `<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">` +
          `<fieldset><legend>Operators it may act for</legend>` +
          p.operators.map((o) =>
            `<label><input type="checkbox" name="operator" value="${escapeHtml(o.id)}" checked> ${
              escapeHtml(o.name)
            } <span class="muted">(${escapeHtml(o.role)})</span></label>`
          ).join("") +
          `</fieldset><fieldset><legend>What it may do</legend>` +
          SCOPES.map((s) =>
            `<label><input type="checkbox" name="scope" value="${s}"${p.ticked.has(s) ? " checked" : ""}> ${
              escapeHtml(SCOPE_LABELS[s])
            } <code>${s}</code></label>`
          ).join("") +
          `</fieldset><button type="submit">Allow</button></form>`) +
      `<form method="post" action="/oauth/interaction/${encodeURIComponent(p.uid)}/abort">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}"><button type="submit">Deny</button></form>`,
    p.status
  )

export const messagePage = (title: string, message: string, status: number, headers: Record<string, string> = {}) =>
  page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`, status).pipe(
    HttpServerResponse.setHeaders(headers)
  )
