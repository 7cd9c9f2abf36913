/**
 * The day's salt of the visitor hash (Contract 1, docs/api/privacy.md): one random 32-byte salt per
 * UTC day in `site_salts`, the same for every instance (the first to need a day's salt stores it;
 * the others read that one). Kept in memory for the days in use; the salt job deletes salts after
 * 48 hours, so no hash can be recomputed afterwards. SQL: SiteEventsRepo.
 */
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { SiteEventsRepo } from "./SiteEventsRepo.js"

export class SiteSalts extends Effect.Service<SiteSalts>()("Analytics/SiteSalts", {
  effect: Effect.gen(function*() {
    const repo = yield* SiteEventsRepo
    const cache = new Map<string, Uint8Array>()

    /** The salt of a UTC day (YYYY-MM-DD), made when the day has none yet. */
    const saltOf = (day: string): Effect.Effect<Uint8Array> => {
      const cached = cache.get(day)
      if (cached !== undefined) return Effect.succeed(cached)
      return Effect.map(repo.saltOf(day, randomBytes(32)), (salt) => {
        // Only a day or two is ever in use: what is older is forgotten here too.
        if (cache.size >= 4) cache.clear()
        cache.set(day, salt)
        return salt
      })
    }

    return { saltOf } as const
  }),
  dependencies: [SiteEventsRepo.Default]
}) {}
