import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { cleanTourHtml } from "../../src/catalogue/tourHtml.js"
import { violations, XSS_CORPUS } from "../support/xss.js"

describe("cleanTourHtml", () => {
  it.each(XSS_CORPUS.map((v) => [v]))("leaves nothing executable of %s", (vector) => {
    const clean = cleanTourHtml(vector)
    expect(violations(clean), clean).toEqual([])
    expect(clean).not.toMatch(/<script|<svg|<math|<iframe|<img|<style|<object|<embed|<form|<meta|<base|<link|<!--/i)
    expect(clean).not.toMatch(/\son[a-z]+=|style=|javascript:|vbscript:|data:/i)
    // Clean HTML (what a careful writer stores) comes back unchanged.
    expect(cleanTourHtml(clean)).toBe(clean)
  })

  it("keeps exactly the allowed tags and link attributes", () => {
    const html = `<h2>Day</h2><h3>Morning</h3><h4>Note</h4><p>A <strong>s</strong> <b>b</b> <em>e</em> <i>i</i> ` +
      `<u>u</u> <span>sp</span><br></p><ul><li>one</li></ul><ol><li>two</li></ol>` +
      `<p><a href="https://fjord.example/map" target="_blank" rel="nofollow">map</a> ` +
      `<a href="mailto:hello@fjord.example">mail</a> <a href="http://old.example" target="_self">old</a></p>`
    expect(cleanTourHtml(html)).toBe(
      `<h2>Day</h2><h3>Morning</h3><h4>Note</h4><p>A <strong>s</strong> <b>b</b> <em>e</em> <i>i</i> ` +
        `<u>u</u> <span>sp</span><br /></p><ul><li>one</li></ul><ol><li>two</li></ol>` +
        `<p><a href="https://fjord.example/map" target="_blank" rel="nofollow noopener noreferrer">map</a> ` +
        `<a href="mailto:hello@fjord.example">mail</a> <a href="http://old.example" target="_self">old</a></p>`
    )
  })

  it("removes what the spec does not allow and keeps the text", () => {
    expect(cleanTourHtml(`<p onclick="alert(1)" style="color:red" class="x">Text</p>`)).toBe("<p>Text</p>")
    expect(cleanTourHtml(`<div><h1>Big</h1><table><tr><td>cell</td></tr></table></div>`)).toBe("Bigcell")
    expect(cleanTourHtml(`<p>Hello <script>alert(1)</script>world</p>`)).toBe("<p>Hello world</p>")
    expect(cleanTourHtml(`<a href="javascript:alert(1)">x</a>`)).toBe("<a>x</a>")
    expect(cleanTourHtml(`<a href="jav&#x09;ascript:alert(1)">x</a>`)).toBe("<a>x</a>")
    expect(cleanTourHtml(`<a href="/relative">x</a>`)).toBe("<a>x</a>")
    expect(cleanTourHtml(`<a href="https://ok.example" target="_top">x</a>`)).toBe(`<a href="https://ok.example">x</a>`)
    expect(cleanTourHtml(`<p>unclosed <strong>bold`)).toBe("<p>unclosed <strong>bold</strong></p>")
    expect(cleanTourHtml(`&lt;script&gt;`)).toBe("&lt;script&gt;")
    expect(cleanTourHtml(`<!-- hidden -->shown`)).toBe("shown")
    expect(cleanTourHtml(null)).toBe("")
    expect(cleanTourHtml("  ")).toBe("")
  })

  it("never lets anything through for arbitrary mixes of markup fragments", () => {
    const fragment = fc.constantFrom(
      "<p>",
      "</p>",
      "<a href=\"",
      "javascript:",
      "https://x.example",
      "\">",
      "</a>",
      "<script>",
      "</script>",
      "<svg>",
      "<img src=x onerror=alert(1)>",
      "<!--",
      "-->",
      "&lt;",
      "&#x6A;",
      "<span style=\"",
      "\"",
      "'",
      "<",
      ">",
      "=",
      " onclick=",
      "text",
      "<math>",
      "<iframe>",
      "<br>",
      "<li>",
      "target=\"_blank\"",
      " ",
      "<![CDATA[",
      "]]>",
      "<b"
    )
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 30 }), (parts) => {
        const clean = cleanTourHtml(parts.join(""))
        expect(violations(clean), clean).toEqual([])
        expect(violations(cleanTourHtml(clean))).toEqual([])
      }),
      { numRuns: 2000 }
    )
  })
})
