/**
 * Answers to publishable keys, kept in memory for as long as spec §8 lets shared caches keep them
 * (`s-maxage`: list 5 min, tour 10 min, availability 1 min). A repeated request is answered from
 * here without reading the catalogue or the booking system (only the key is looked up) and does not count against the key's 1200
 * uncached requests a minute, as if a CDN had answered it. Per instance, bounded (oldest entries
 * dropped first); nothing is invalidated early, so a catalogue edit reaches publishable keys within
 * those times, the same as through any CDN. Secret keys never use it.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Clock, Effect } from "effect"

/** Seconds an answer stays fresh, by endpoint (the `s-maxage` of PUBLIC_CACHE_CONTROL). */
export const PUBLIC_TTL_SECONDS = { list: 300, detail: 600, availability: 60 } as const

const MAX_ENTRIES = 20_000

const utf8 = new TextEncoder()

/** An answer as it is kept and sent: its JSON's UTF-8 bytes, encoded once when it is computed. */
export const answerBytes = (answer: unknown): Uint8Array => utf8.encode(JSON.stringify(answer))

/** The cache key: the publishable key, the path and the query without `key`, parameters sorted. */
export const publicCacheKey = (keyId: string, url: string) => {
  const parsed = new URL(url, "http://localhost")
  const params = [...parsed.searchParams.entries()].filter(([name]) => name !== "key").sort(([a, x], [b, y]) =>
    a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1
  )
  return `${keyId} ${parsed.pathname}?${new URLSearchParams(params).toString()}`
}

export class PublicCatalogueCache extends Effect.Service<PublicCatalogueCache>()("Partner/PublicCatalogueCache", {
  sync: () => {
    // The bytes, not the text: a HIT is sent without encoding the answer again (a list page is about
    // 100 KB), and the same array each time lets response compression reuse its compressed copy
    // (src/http/compression.ts). bench/README.md, "Issue 5".
    const entries = new Map<string, { readonly body: Uint8Array; readonly expires: number }>()
    // A request's cache key, computed once: the security and the handler both ask for it.
    const keys = new WeakMap<HttpServerRequest.HttpServerRequest, string>()

    // No spans on these (the house rule's exception): they are in-memory look-ups on the
    // cached catalogue path (`npm run bench:tours`, X-Cache: HIT), and a span, even a no-op one with
    // tracing off, costs several microseconds: more than the look-up it would describe.

    /** The cache key of `request`, read with the publishable key `keyId` (`publicCacheKey`). */
    const keyOf = (keyId: string, request: HttpServerRequest.HttpServerRequest) => {
      let key = keys.get(request)
      if (key === undefined) {
        key = publicCacheKey(keyId, request.url)
        keys.set(request, key)
      }
      return key
    }

    /** The fresh answer stored under `key`, if any. */
    const get = (key: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(key)
        if (entry === undefined) return undefined
        if (entry.expires <= now) {
          entries.delete(key)
          return undefined
        }
        return entry.body
      })

    const set = (key: string, body: Uint8Array, ttlSeconds: number) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        entries.delete(key)
        entries.set(key, { body, expires: now + ttlSeconds * 1000 })
        while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!)
      })

    return { keyOf, get, set } as const
  }
}) {}
