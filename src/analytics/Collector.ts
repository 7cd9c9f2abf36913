/**
 * The collection use case (POST /api/v1/collect; docs/api/collect.md, docs/api/privacy.md): one
 * event a site's page reported, checked and turned into a `site_events` row that waits in the
 * EventBuffer. In order: the publishable key (unknown or revoked: 404), the page's `Origin` (not one
 * of the key's allowed origins: dropped), the user agent (a bot: dropped), the limit per address and
 * site (429; counted in this instance's memory: CollectLimiter), then the row: the visitor hash of the day, the path without its query, referrer, UTM,
 * channel, country, device, browser and OS; a `tour_id` the site does not sell is stored as none (the
 * step still counts for the site, not for any tour). A dropped event answers as an accepted one (202), so a
 * script learns nothing from it. The address and the user agent are never kept: the rate limiter's
 * bucket is named by a keyed hash too.
 */
import { Clock, Effect, Either } from "effect"
import { isbot } from "isbot"
import { createHmac } from "node:crypto"
import { InvalidRequest, NotFound, RateLimited } from "../domain/errors.js"
import { originAllowed } from "../partner/auth/publishableKey.js"
import { type PublishableKey, PublishableKeys } from "../partner/auth/PublishableKeys.js"
import { channelOf } from "./channel.js"
import { CollectLimiter } from "./CollectLimiter.js"
import { AnalyticsCollectConfig } from "./config.js"
import { Countries } from "./Countries.js"
import { EventBuffer } from "./EventBuffer.js"
import { deviceOf, type EventKind, pageFacts, utcDay, visitorHash } from "./events.js"
import { SiteEventsRepo } from "./SiteEventsRepo.js"
import { SiteSalts } from "./SiteSalts.js"

/** What the page sent (the body, decoded) and what its request carries. */
export interface CollectInput {
  readonly key: string
  readonly kind: EventKind
  readonly url: string
  readonly referrer: string | null
  readonly newVisitor: boolean
  readonly tourId: string | null
  readonly bookingCode: string | null
  readonly origin: string | undefined
  readonly userAgent: string
  readonly ip: string
  readonly headers: Readonly<Record<string, string | undefined>>
}

/** What became of an event: stored (queued for the next batch) or dropped, and why. */
export type CollectOutcome = "stored" | "foreign_origin" | "bot"

/** How long a publishable key's look-up is reused: a revoked key stops being taken within this. */
const KEY_CACHE_MS = 30_000
const KEY_CACHE_MAX = 10_000
/** How long a site's tours are reused; a tour not among them is looked up again at most this often. */
const TOURS_CACHE_MS = 60_000
const TOURS_RECHECK_MS = 10_000

export class Collector extends Effect.Service<Collector>()("Analytics/Collector", {
  effect: Effect.gen(function*() {
    const keys = yield* PublishableKeys
    const limiter = yield* CollectLimiter
    const buffer = yield* EventBuffer
    const salts = yield* SiteSalts
    const countries = yield* Countries
    const config = yield* AnalyticsCollectConfig
    const keyCache = new Map<string, { readonly key: PublishableKey | undefined; readonly until: number }>()
    const repo = yield* SiteEventsRepo
    const toursCache = new Map<string, { readonly tours: ReadonlySet<string>; readonly loadedAt: number }>()

    /** The tour as stored: the id when the site sells it, else null (a tour added a moment ago is found). */
    const tourOf = (siteId: string, tourId: string | null, now: number) =>
      Effect.gen(function*() {
        if (tourId === null) return null
        const cached = toursCache.get(siteId)
        const fresh = cached !== undefined && now - cached.loadedAt < TOURS_CACHE_MS
        if (fresh && (cached.tours.has(tourId) || now - cached.loadedAt < TOURS_RECHECK_MS)) {
          return cached.tours.has(tourId) ? tourId : null
        }
        const tours = yield* repo.toursOf(siteId)
        if (toursCache.size >= KEY_CACHE_MAX) toursCache.clear()
        toursCache.set(siteId, { tours, loadedAt: now })
        return tours.has(tourId) ? tourId : null
      })

    const keyOf = (token: string, now: number) => {
      const cached = keyCache.get(token)
      if (cached !== undefined && cached.until > now) return Effect.succeed(cached.key)
      return keys.authenticate(token).pipe(
        Effect.map((key): PublishableKey | undefined => key),
        Effect.catchTag("Unauthorized", () => Effect.succeed(undefined)),
        Effect.tap((key) =>
          Effect.sync(() => {
            if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear()
            keyCache.set(token, { key, until: now + KEY_CACHE_MS })
          })
        )
      )
    }

    const collect = Effect.fn("Collector.collect")(function*(input: CollectInput) {
      const now = yield* Clock.currentTimeMillis
      const key = yield* keyOf(input.key, now)
      if (key === undefined) {
        return yield* new NotFound({ detail: "no site has this publishable key (or it was revoked)" })
      }
      const facts = pageFacts(input.url, input.referrer)
      if (Either.isLeft(facts)) return yield* new InvalidRequest({ detail: `url ${facts.left}`, field: "url" })
      if (input.origin === undefined || !originAllowed(input.origin, key.allowedOrigins)) {
        return "foreign_origin" as CollectOutcome
      }
      if (input.userAgent.trim() === "" || isbot(input.userAgent)) return "bot" as CollectOutcome

      const at = new Date(now)
      const salt = yield* salts.saltOf(utcDay(at))
      const bucket = createHmac("sha256", salt).update(`collect|${key.siteId}|${input.ip}`).digest("base64url")
      const decision = yield* limiter.hit(bucket, config.perIpPerMinute)
      if (!decision.allowed) {
        return yield* new RateLimited({
          detail:
            `more than ${decision.limit} events in ${decision.windowSeconds} seconds from this address for this site`,
          retryAfterSeconds: decision.resetSeconds
        })
      }
      const page = facts.right
      const tourId = yield* tourOf(key.siteId, input.tourId, now)
      yield* buffer.add({
        at,
        siteId: key.siteId,
        kind: input.kind,
        visitor: visitorHash(salt, key.siteId, input.ip, input.userAgent),
        newVisitor: input.newVisitor,
        tourId,
        path: page.path,
        referrerHost: page.referrerHost,
        channel: channelOf(page),
        utmSource: page.utmSource,
        utmMedium: page.utmMedium,
        utmCampaign: page.utmCampaign,
        country: countries.of(input.headers, input.ip),
        ...deviceOf(input.userAgent),
        bookingCode: input.bookingCode
      })
      return "stored" as CollectOutcome
    })

    return { collect, flush: buffer.flush } as const
  }),
  dependencies: [
    PublishableKeys.Default,
    EventBuffer.Default,
    SiteSalts.Default,
    Countries.Default,
    SiteEventsRepo.Default,
    CollectLimiter.Default
  ]
}) {}
