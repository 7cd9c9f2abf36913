/**
 * Answers to publishable keys, kept in memory for as long as spec §8 lets shared caches keep them
 * (`s-maxage`: list 5 min, tour 10 min, availability 1 min). A repeated request is answered from
 * here without reading the catalogue or the booking system (only the key is looked up) and does not count against the key's 1200
 * uncached requests a minute, as if a CDN had answered it. Per instance, bounded (oldest entries
 * dropped first); nothing is invalidated early, so a catalogue edit reaches publishable keys within
 * those times, the same as through any CDN. Secret keys never use it.
 */
import { Clock, Effect } from "effect"

/** Seconds an answer stays fresh, by endpoint (the `s-maxage` of PUBLIC_CACHE_CONTROL). */
export const PUBLIC_TTL_SECONDS = { list: 300, detail: 600, availability: 60 } as const

const MAX_ENTRIES = 20_000

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
    const entries = new Map<string, { readonly body: string; readonly expires: number }>()

    // No spans on get and set (the house rule's exception): they are in-memory look-ups on the
    // cached catalogue path (`npm run bench:tours`, X-Cache: HIT), and a span, even a no-op one with
    // tracing off, costs several microseconds: more than the look-up it would describe.

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

    const set = (key: string, body: string, ttlSeconds: number) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        entries.delete(key)
        entries.set(key, { body, expires: now + ttlSeconds * 1000 })
        while (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!)
      })

    return { get, set } as const
  }
}) {}
