/**
 * XSS vectors for the catalogue's HTML cleaner, each with what must not survive. Shared by the unit
 * test of the cleaner and the HTTP test that stores them raw and reads them back.
 */
export const XSS_CORPUS: ReadonlyArray<string> = [
  // script tags, split and nested
  `<p>Hello <script>alert(1)</script>world</p>`,
  `<SCRIPT SRC=https://evil.example/x.js></SCRIPT>`,
  `<scr<script>ipt>alert(1)</scr</script>ipt>`,
  `<<script>alert(1)//<</script>`,
  `<script>/*</script><p>*/alert(1)</p>`,
  // event handlers
  `<img src=x onerror=alert(1)>`,
  `<p onclick="alert(1)" onmouseover='alert(2)'>Text</p>`,
  `<body onload=alert(1)>`,
  `<span/onmouseover=alert(1)>x</span>`,
  `<a href="https://ok.example" onfocus="alert(1)" autofocus>x</a>`,
  `<strong ONCLICK=alert(1)>bold</strong>`,
  // dangerous URLs, plain and obfuscated
  `<a href="javascript:alert(1)">x</a>`,
  `<a href="JaVaScRiPt:alert(1)">x</a>`,
  `<a href=" javascript:alert(1)">x</a>`,
  `<a href="jav&#x09;ascript:alert(1)">x</a>`,
  `<a href="jav&#9;ascript:alert(1)">x</a>`,
  `<a href="jav&#x0A;ascript:alert(1)">x</a>`,
  `<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>`,
  `<a href="&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;&#x3A;alert(1)">x</a>`,
  `<a href="javascript&colon;alert(1)">x</a>`,
  `<a href="java\u0000script:alert(1)">x</a>`,
  `<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
  `<a href="DATA:text/html,<script>alert(1)</script>">x</a>`,
  `<a href="vbscript:msgbox(1)">x</a>`,
  `<a href="VBScript&#58;msgbox(1)">x</a>`,
  `<a href="//evil.example/x">x</a>`,
  `<a href="https:evil">x</a>`,
  `<a href="https://ok.example" formaction="javascript:alert(1)" xlink:href="javascript:alert(1)">x</a>`,
  // svg and math
  `<svg onload=alert(1)><script>alert(1)</script></svg>`,
  `<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
  `<svg><animate onbegin=alert(1) attributeName=x dur=1s>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
  `<math href="javascript:alert(1)">x</math>`,
  // style attributes and elements
  `<p style="color:red">styled</p>`,
  `<span style="background:url(javascript:alert(1))">s</span>`,
  `<p style="behavior:url(x.htc);-moz-binding:url(x.xml)">b</p>`,
  `<style>@import 'https://evil.example/x.css';</style>`,
  `<link rel=stylesheet href="https://evil.example/x.css">`,
  // iframes, objects, forms, meta, base
  `<iframe src="https://evil.example"></iframe>after`,
  `<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
  `<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">`,
  `<form action="javascript:alert(1)"><button>go</button></form>`,
  `<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
  `<base href="javascript:/">`,
  `<video><source onerror="alert(1)"></video>`,
  // comments, CDATA, templates, mutation tricks
  `<!-- <script>alert(1)</script> -->visible`,
  `<!--><img src=x onerror=alert(1)>-->`,
  `<![CDATA[<script>alert(1)</script>]]>`,
  `<template><script>alert(1)</script></template>`,
  `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
  `<textarea><script>alert(1)</script></textarea>`,
  `<xmp><img src=x onerror=alert(1)></xmp>`,
  // unclosed tags and broken markup
  `<p>unclosed <strong>bold <em>both`,
  `<a href="https://ok.example">unclosed link`,
  `<img src=x onerror=alert(1)`,
  `<p <script>alert(1)</script>>`,
  `<div><h1>Big</h1><h2>Sub</h2><table><tr><td>cell</td></tr></table></div>`,
  // entity tricks
  `&lt;script&gt;alert(1)&lt;/script&gt;`,
  `&#60;script&#62;alert(1)&#60;/script&#62;`,
  `<p title="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">t</p>`,
  `<a href="https://ok.example/?q=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">x</a>`,
  // attributes the spec does not allow
  `<p class="x" id="y" title="t" data-x="1" aria-label="z">attrs</p>`,
  `<a href="https://ok.example" target="_top" rel="opener" class="x" id="y">x</a>`
]

/** Tags the spec allows in catalogue HTML. */
export const ALLOWED = new Set([
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
])

/**
 * What the cleaned output must satisfy: only allowed tags, attributes only on `a` and only href
 * (absolute http, https or mailto), target and rel; nothing executable anywhere.
 */
export const violations = (html: string): Array<string> => {
  const found: Array<string> = []
  for (const m of html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9:-]*)([^>]*)>/g)) {
    const tag = m[1]!.toLowerCase()
    const attrs = m[2]!.replace(/\/\s*$/, "").trim()
    if (!ALLOWED.has(tag)) found.push(`tag ${tag}`)
    if (attrs === "") continue
    if (tag !== "a") {
      found.push(`attributes on ${tag}: ${attrs}`)
      continue
    }
    for (const a of attrs.matchAll(/([^\s=]+)(?:="([^"]*)")?/g)) {
      const [name, value = ""] = [a[1]!, a[2]]
      if (!["href", "target", "rel"].includes(name)) found.push(`attribute ${name}`)
      if (name === "href" && !/^(https?:\/\/|mailto:)/i.test(value)) found.push(`href ${value}`)
      if (name === "target" && !["_blank", "_self"].includes(value)) found.push(`target ${value}`)
    }
    if (/target="_blank"/.test(attrs) && !/rel="[^"]*noopener[^"]*"/.test(attrs)) found.push("_blank without noopener")
  }
  // Markup-looking text must be escaped: a raw "<" may only open one of the tags checked above.
  if (/<(?![a-zA-Z/])/.test(html)) found.push("raw <")
  if (/<[^>]*$/.test(html)) found.push("unterminated tag")
  return found
}
