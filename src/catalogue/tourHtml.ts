/**
 * The tour catalogue's rich text (`description_html`, `included_html`, `excluded_html`), cleaned to
 * exactly what spec §2 allows: p, br, strong, b, em, i, u, ul, ol, li, h2, h3, h4, span, and a with
 * href, target and rel only. No other tag, no other attribute (no style, class, id or on* handler).
 *
 * Rules beyond the tag list, each closing a way round it:
 * - A link keeps `href` only when it is an absolute http:, https: or mailto: URL. Anything else
 *   (javascript:, data:, vbscript:, obfuscated with entities, control characters or spaces;
 *   protocol-relative `//host`; relative paths, which would resolve against the embedding site) loses
 *   its `href`, so the text stays and nothing is clickable.
 * - `target` is `_blank` or `_self`; any other value is dropped. A `_blank` link always carries
 *   `rel="noopener noreferrer"` (plus any rel tokens given), so the opened page cannot reach back.
 * - The content of script, style, textarea, option, noscript, noembed, noframes, xmp, iframe,
 *   object, template, title, svg and math is dropped with the tag; other disallowed tags (div, img,
 *   table …) are removed and their text kept.
 * - Comments, CDATA and processing instructions are dropped; text is re-escaped on output.
 *
 * Pure: sanitize-html (htmlparser2) runs in memory. Well-formed clean HTML comes back unchanged;
 * broken markup may be re-nested on a second pass (e.g. implied `</li>`), always within these rules.
 */
import sanitizeHtml from "sanitize-html"

export const ALLOWED_TAGS = [
  "p",
  "br",
  "strong",
  "b",
  "em",
  "i",
  "u",
  "ul",
  "ol",
  "li",
  "h2",
  "h3",
  "h4",
  "span",
  "a"
] as const

const DROPPED_WITH_CONTENT = [
  "script",
  "style",
  "textarea",
  "option",
  "noscript",
  "noembed",
  "noframes",
  "xmp",
  "iframe",
  "object",
  "template",
  "title",
  "svg",
  "math"
]

/** An absolute URL with a safe scheme, as the browser will read it (entities already decoded). */
const SAFE_HREF = /^(https?:\/\/[^\s/?#]+|mailto:[^\s])/i
const TARGETS = new Set(["_blank", "_self"])
const REL_TOKEN = /^[a-z][a-z-]{0,30}$/

const cleanLink: sanitizeHtml.Transformer = (tagName, attribs) => {
  const out: sanitizeHtml.Attributes = {}
  const href = (attribs.href ?? "").trim()
  if (SAFE_HREF.test(href)) out.href = href
  const target = (attribs.target ?? "").trim().toLowerCase()
  const rel = new Set((attribs.rel ?? "").toLowerCase().split(/\s+/).filter((t) => REL_TOKEN.test(t)))
  if (TARGETS.has(target)) out.target = target
  if (target === "_blank") {
    rel.add("noopener")
    rel.add("noreferrer")
  }
  if (rel.size > 0) out.rel = [...rel].join(" ")
  return { tagName, attribs: out }
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: { a: ["href", "target", "rel"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ["href"],
  allowProtocolRelative: false,
  allowedClasses: {},
  allowedStyles: {},
  parseStyleAttributes: false,
  allowVulnerableTags: false,
  disallowedTagsMode: "discard",
  nonTextTags: DROPPED_WITH_CONTENT,
  enforceHtmlBoundary: false,
  transformTags: { a: cleanLink },
  selfClosing: ["br"]
}

/** Clean HTML as spec §2 allows it; null or blank gives "". */
export const cleanTourHtml = (dirty: string | null | undefined): string =>
  dirty == null || dirty.trim() === "" ? "" : sanitizeHtml(dirty, OPTIONS).trim()
