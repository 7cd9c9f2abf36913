/**
 * What a message says, as a list of blocks rendered twice, as plain text and as HTML, so that both
 * parts say the same thing and every value passes through one escaping function on its way into
 * HTML (pure; no I/O).
 */
import type { Locale } from "../rules.js"
import { escapeHtml } from "./format.js"

export type Block =
  | { readonly kind: "p"; readonly text: string }
  | { readonly kind: "details"; readonly rows: ReadonlyArray<readonly [string, string]> }
  | { readonly kind: "link"; readonly label: string; readonly fallback: string; readonly url: string }

/** A template's message in one locale: its subject and what it says. */
export interface Composed {
  readonly subject: string
  readonly blocks: ReadonlyArray<Block>
}

export const p = (text: string): Block => ({ kind: "p", text })
export const details = (rows: ReadonlyArray<readonly [string, string] | null>): Block => ({
  kind: "details",
  rows: rows.filter((r): r is readonly [string, string] => r !== null)
})

export const toText = (blocks: ReadonlyArray<Block>): string =>
  blocks.map((b) => {
    switch (b.kind) {
      case "p":
        return b.text
      case "details": {
        return b.rows.map(([label, value]) => `${label}: ${value.replace(/\s*\n\s*/g, " ")}`).join("\n")
      }
      case "link":
        return `${b.fallback}: ${b.url}`
    }
  }).join("\n\n") + "\n"

const html = (value: string) => escapeHtml(value).replace(/\r?\n/g, "<br>\n")

export const toHtml = (locale: Locale, subject: string, blocks: ReadonlyArray<Block>): string => {
  const body = blocks.map((b) => {
    switch (b.kind) {
      case "p":
        return `<p style="margin:0 0 16px">${html(b.text)}</p>`
      case "details":
        return `<table role="presentation" style="border-collapse:collapse;margin:0 0 16px">\n${
          b.rows.map(([label, value]) =>
            `<tr><td style="padding:4px 16px 4px 0;color:#555555;vertical-align:top">${html(label)}</td>` +
            `<td style="padding:4px 0;vertical-align:top"><strong>${html(value)}</strong></td></tr>`
          ).join("\n")
        }\n</table>`
      case "link":
        return `<p style="margin:24px 0"><a href="${
          escapeHtml(b.url)
        }" style="display:inline-block;padding:12px 20px;` +
          `background:#0b5fff;color:#ffffff;text-decoration:none;border-radius:4px">${html(b.label)}</a></p>\n` +
          `<p style="margin:0 0 16px;font-size:13px;color:#555555">${html(b.fallback)}: ` +
          `<a href="${escapeHtml(b.url)}">${html(b.url)}</a></p>`
    }
  }).join("\n")
  return `<!DOCTYPE html>
<html lang="${locale}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${
    html(subject)
  }</title></head>
<body style="margin:0;padding:24px;background:#f4f4f4;font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1a1a1a">
<div style="max-width:560px;margin:0 auto;padding:24px;background:#ffffff;border-radius:6px">
${body}
</div>
</body>
</html>
`
}
