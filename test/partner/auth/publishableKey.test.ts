/** Publishable keys (src/partner/auth/publishableKey.ts): the token, allowed origins and the browser's Origin. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  generatePublishableKey,
  normalizeOrigin,
  originAllowed,
  parsePublishableKey,
  PUBLIC_CACHE_CONTROL
} from "../../../src/partner/auth/publishableKey.js"

describe("the token", () => {
  it("pk_widget_ and 24 letters or digits; anything else is not one", () => {
    const k = generatePublishableKey()
    expect(k.token).toMatch(/^pk_widget_[A-Za-z0-9]{24}$/)
    expect(parsePublishableKey(k.token)).toBe(k.id)
    for (
      const bad of [
        "",
        "pk_widget_",
        `pk_widget_${k.id}x`,
        `pk_widget_${k.id.slice(1)}`,
        `svc_live_${k.id}`,
        ` ${k.token}`,
        `pk_widget_${"-".repeat(24)}`
      ]
    ) {
      expect(parsePublishableKey(bad)).toBeUndefined()
    }
  })
})

describe("normalizeOrigin", () => {
  const ok = (input: string) => Either.getOrThrow(normalizeOrigin(input))
  it("a bare domain means https; case and a trailing slash do not matter", () => {
    expect(ok("FjordExplorer.no")).toBe("https://fjordexplorer.no")
    expect(ok("https://www.fjordexplorer.no/")).toBe("https://www.fjordexplorer.no")
    expect(ok("https://shop.example.com:8443")).toBe("https://shop.example.com:8443")
    expect(ok("https://shop.example.com:443")).toBe("https://shop.example.com")
  })
  it("a *. prefix allows subdomains; http only for localhost and 127.0.0.1", () => {
    expect(ok("*.fjordexplorer.no")).toBe("https://*.fjordexplorer.no")
    expect(ok("http://localhost:8080")).toBe("http://localhost:8080")
    expect(ok("http://127.0.0.1:5173")).toBe("http://127.0.0.1:5173")
  })
  it("refused: http on a public host, paths, queries, credentials, other schemes, no dot, garbage", () => {
    for (
      const bad of [
        "http://fjordexplorer.no",
        "https://fjordexplorer.no/widget",
        "https://a.no?x=1",
        "https://u:p@a.no",
        "ftp://a.no",
        "intranet",
        "https://",
        "not a domain"
      ]
    ) {
      expect(Either.isLeft(normalizeOrigin(bad)), bad).toBe(true)
    }
  })
})

describe("originAllowed", () => {
  const allowed = ["https://fjordexplorer.no", "https://*.fjordexplorer.no", "http://localhost:8080"]
  it("exact origins and subdomains of a *. entry", () => {
    for (
      const origin of [
        "https://fjordexplorer.no",
        "https://www.fjordexplorer.no",
        "https://a.b.fjordexplorer.no",
        "http://localhost:8080"
      ]
    ) {
      expect(originAllowed(origin, allowed), origin).toBe(true)
    }
  })
  it("anything else: other scheme, port, host, look-alike suffix, null, garbage", () => {
    for (
      const origin of [
        "http://fjordexplorer.no",
        "https://fjordexplorer.no:8443",
        "https://evil.no",
        "https://evilfjordexplorer.no",
        "https://fjordexplorer.no.evil.com",
        "http://localhost:8081",
        "null",
        "",
        "https://fjordexplorer.no/path"
      ]
    ) {
      expect(originAllowed(origin, allowed), origin).toBe(false)
    }
  })
})

describe("cache headers (spec §8)", () => {
  it("list 300/3600, detail 600/86400, availability 60/300, shared caches only", () => {
    expect(PUBLIC_CACHE_CONTROL).toEqual({
      list: "public, s-maxage=300, stale-while-revalidate=3600",
      detail: "public, s-maxage=600, stale-while-revalidate=86400",
      availability: "public, s-maxage=60, stale-while-revalidate=300"
    })
  })
})
