/**
 * The rules of the site analytics rollups (pure; src/analytics/AnalyticsRollups.ts runs them on each
 * batch of new events, docs/decisions.md "Analytics rollups"):
 *
 * - A session is one visitor's events (on one site) with gaps of at most 30 minutes. It is counted
 *   on the UTC day of its first event, even when it runs past midnight; a later event within 30
 *   minutes extends it (an event that arrives a little out of order, up to 30 minutes before its
 *   first event, belongs to it too). Its duration is last event − first event in whole seconds;
 *   it is a bounce while it has exactly one pageview.
 * - A session's labels (channel, referrer, utm_*, country, device, browser, os, and its entry path)
 *   are those of its first event: where the visit came from, not the site's own links. Visitors per
 *   label are distinct per (site, start day, dimension, label); for `path` every path the visitor
 *   had an event on that day counts (the entry path is what a conversion is credited to).
 * - A funnel step counts distinct sessions per (site, tour, start day of the session, step).
 * - A checkout_attempt's booking code is attributed to the first session that carried it.
 *
 * Distinct counts are decided by the database (insert-if-absent keys, AnalyticsRollupsRepo): these
 * functions only list the candidate keys of a batch, deduplicated within it.
 */

import type { SiteEvent as StoredEvent } from "./events.js"
export const DIMENSIONS = [
  "channel",
  "referrer",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "country",
  "device",
  "browser",
  "os",
  "path"
] as const
export type Dimension = typeof DIMENSIONS[number]

/** The label of an absent value (no referrer, no UTM parameter, unknown country). */
export const NONE = "(none)"
/** Dedupe keys of the site-wide counts, beside the dimensions' (never a dimension's name). */
export const SITE_VISITORS = "_site"
export const NEW_VISITORS = "_new"

export const SESSION_GAP_MS = 30 * 60 * 1000

export type EventKind = "pageview" | "tour_view" | "availability_check" | "checkout_open" | "checkout_attempt"

/** The funnel steps of a tour, by the event kind that is the step. */
export const STEPS = ["tour_view", "availability_check", "checkout_open", "checkout_attempt"] as const

/** A stored event as the rollups read it: with its id, and `at` in epoch milliseconds. */
export interface SiteEvent extends Omit<StoredEvent, "at" | "kind" | "device"> {
  readonly id: number
  /** Epoch milliseconds. */
  readonly at: number
  readonly kind: string
  readonly device: string
}

export interface Session {
  /** The id of its first event (stable: the dedupe keys and attributions name it). */
  readonly id: number
  readonly siteId: string
  readonly visitor: string
  readonly startedAt: number
  readonly lastAt: number
  readonly startDay: string
  readonly pageviews: number
  /** Its labels in DIMENSIONS order. */
  readonly labels: ReadonlyArray<string>
}

export interface SiteDelta {
  readonly siteId: string
  readonly day: string
  sessions: number
  pageviews: number
  bounces: number
  durationSeconds: number
}

export interface SeenKey {
  readonly siteId: string
  readonly day: string
  readonly dimension: string
  readonly label: string
  readonly visitor: string
}

export interface StepKey {
  readonly siteId: string
  readonly tourId: string
  readonly day: string
  readonly kind: string
  readonly sessionId: number
}

export interface Attempt {
  readonly siteId: string
  readonly bookingCode: string
  readonly sessionId: number
  readonly startDay: string
  readonly labels: ReadonlyArray<string>
}

export interface BatchRollup {
  /** Sessions started or extended by the batch (to be stored). */
  readonly sessions: ReadonlyArray<Session>
  /** Additive changes to analytics_site_daily's session, pageview, bounce and duration counters. */
  readonly site: ReadonlyArray<SiteDelta>
  readonly seen: ReadonlyArray<SeenKey>
  readonly steps: ReadonlyArray<StepKey>
  readonly attempts: ReadonlyArray<Attempt>
}

/** The UTC day of an instant (epoch milliseconds). */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** The first day of the month of an ISO day. */
export const monthOf = (day: string) => `${day.slice(0, 7)}-01`

const orNone = (value: string | null) => value === null || value.trim() === "" ? NONE : value

/** An event's labels in DIMENSIONS order. */
export const labelsOf = (e: SiteEvent): ReadonlyArray<string> => [
  orNone(e.channel),
  orNone(e.referrerHost),
  orNone(e.utmSource),
  orNone(e.utmMedium),
  orNone(e.utmCampaign),
  orNone(e.country),
  orNone(e.device),
  orNone(e.browser),
  orNone(e.os),
  orNone(e.path)
]

const durationOf = (s: { startedAt: number; lastAt: number }) => Math.floor((s.lastAt - s.startedAt) / 1000)
const isBounce = (s: { pageviews: number }) => s.pageviews === 1

/**
 * What a batch of new events adds: `open` holds each (site, visitor)'s latest stored session that
 * may still be extended (last event at most 30 minutes before the visitor's first event in the batch).
 */
export const rollUpBatch = (events: ReadonlyArray<SiteEvent>, open: ReadonlyArray<Session>): BatchRollup => {
  const latest = new Map<string, Session>()
  for (const s of open) {
    const key = `${s.siteId}|${s.visitor}`
    const known = latest.get(key)
    if (known === undefined || known.lastAt < s.lastAt) latest.set(key, s)
  }
  const stored = new Map(open.map((s) => [s.id, s]))
  const changed = new Map<number, Session>()
  const site = new Map<string, SiteDelta>()
  const seen = new Map<string, SeenKey>()
  const steps = new Map<string, StepKey>()
  const attempts = new Map<string, Attempt>()

  const siteDelta = (siteId: string, day: string) => {
    const key = `${siteId}|${day}`
    let d = site.get(key)
    if (d === undefined) {
      d = { siteId, day, sessions: 0, pageviews: 0, bounces: 0, durationSeconds: 0 }
      site.set(key, d)
    }
    return d
  }
  const see = (k: SeenKey) => seen.set(`${k.siteId}|${k.day}|${k.dimension}|${k.label}|${k.visitor}`, k)

  const sorted = [...events].sort((a, b) =>
    a.siteId < b.siteId ? -1 : a.siteId > b.siteId ? 1 : a.visitor < b.visitor ? -1 : a.visitor > b.visitor ?
      1 :
      a.at - b.at || a.id - b.id
  )
  for (const e of sorted) {
    const key = `${e.siteId}|${e.visitor}`
    const current = latest.get(key)
    const day = dayOf(e.at)
    let session: Session
    if (
      current !== undefined && e.at <= current.lastAt + SESSION_GAP_MS && e.at >= current.startedAt - SESSION_GAP_MS
    ) {
      session = {
        ...current,
        startedAt: Math.min(current.startedAt, e.at),
        lastAt: Math.max(current.lastAt, e.at),
        pageviews: current.pageviews + (e.kind === "pageview" ? 1 : 0)
      }
    } else {
      const labels = labelsOf(e)
      session = {
        id: e.id,
        siteId: e.siteId,
        visitor: e.visitor,
        startedAt: e.at,
        lastAt: e.at,
        startDay: day,
        pageviews: e.kind === "pageview" ? 1 : 0,
        labels
      }
      siteDelta(e.siteId, day).sessions += 1
      DIMENSIONS.forEach((dimension, i) => {
        if (dimension !== "path") see({ siteId: e.siteId, day, dimension, label: labels[i]!, visitor: e.visitor })
      })
    }
    // The session's contribution to bounces and duration moves from what it was to what it is.
    const before = current !== undefined && current.id === session.id ? current : undefined
    const d = siteDelta(session.siteId, session.startDay)
    d.bounces += (isBounce(session) ? 1 : 0) - (before !== undefined && isBounce(before) ? 1 : 0)
    d.durationSeconds += durationOf(session) - (before !== undefined ? durationOf(before) : 0)
    latest.set(key, session)
    changed.set(session.id, session)

    if (e.kind === "pageview") siteDelta(e.siteId, day).pageviews += 1
    see({ siteId: e.siteId, day, dimension: SITE_VISITORS, label: "", visitor: e.visitor })
    if (e.newVisitor) see({ siteId: e.siteId, day, dimension: NEW_VISITORS, label: "", visitor: e.visitor })
    see({ siteId: e.siteId, day, dimension: "path", label: orNone(e.path), visitor: e.visitor })
    if (e.tourId !== null && (STEPS as ReadonlyArray<string>).includes(e.kind)) {
      const step = { siteId: e.siteId, tourId: e.tourId, day: session.startDay, kind: e.kind, sessionId: session.id }
      steps.set(`${step.siteId}|${step.tourId}|${step.day}|${step.kind}|${step.sessionId}`, step)
    }
    if (e.kind === "checkout_attempt" && e.bookingCode !== null && e.bookingCode.trim() !== "") {
      const code = e.bookingCode.trim()
      const k = `${e.siteId}|${code}`
      if (!attempts.has(k)) {
        attempts.set(k, {
          siteId: e.siteId,
          bookingCode: code,
          sessionId: session.id,
          startDay: session.startDay,
          labels: session.labels
        })
      }
    }
  }
  // A session stored before and left as it was needs no write.
  const sessions = [...changed.values()].filter((s) => {
    const was = stored.get(s.id)
    return was === undefined || was.lastAt !== s.lastAt || was.startedAt !== s.startedAt ||
      was.pageviews !== s.pageviews
  })
  return {
    sessions,
    site: [...site.values()].filter((d) =>
      d.sessions !== 0 || d.pageviews !== 0 || d.bounces !== 0 || d.durationSeconds !== 0
    ),
    seen: [...seen.values()],
    steps: [...steps.values()],
    attempts: [...attempts.values()]
  }
}

/** One attribution as stored and as the bookings say it should be now. */
export interface AttributionChange {
  readonly siteId: string
  readonly sessionId: number
  readonly startDay: string
  readonly labels: ReadonlyArray<string>
  readonly before: { readonly live: boolean; readonly revenue: number }
  readonly after: { readonly live: boolean; readonly revenue: number }
}

export interface SourceDelta {
  readonly siteId: string
  readonly day: string
  readonly dimension: Dimension
  readonly label: string
  conversions: number
  revenue: number
}

/**
 * What changed attributions move in analytics_source_daily: a session converts while at least one
 * of its attributed bookings is live; its revenue is the sum of its live bookings' (EUR minor). Give
 * every attribution of each session concerned (unchanged ones with after = before).
 */
export const attributionDeltas = (changes: ReadonlyArray<AttributionChange>): ReadonlyArray<SourceDelta> => {
  const bySession = new Map<number, Array<AttributionChange>>()
  for (const c of changes) {
    const list = bySession.get(c.sessionId) ?? []
    list.push(c)
    bySession.set(c.sessionId, list)
  }
  const out = new Map<string, SourceDelta>()
  for (const list of bySession.values()) {
    const first = list[0]!
    const converted = (side: "before" | "after") => list.some((c) => c[side].live)
    const revenue = (side: "before" | "after") => list.reduce((n, c) => n + (c[side].live ? c[side].revenue : 0), 0)
    const conversions = (converted("after") ? 1 : 0) - (converted("before") ? 1 : 0)
    const money = revenue("after") - revenue("before")
    if (conversions === 0 && money === 0) continue
    DIMENSIONS.forEach((dimension, i) => {
      const label = first.labels[i] ?? NONE
      const key = `${first.siteId}|${first.startDay}|${dimension}|${label}`
      const d = out.get(key) ??
        { siteId: first.siteId, day: first.startDay, dimension, label, conversions: 0, revenue: 0 }
      d.conversions += conversions
      d.revenue += money
      out.set(key, d)
    })
  }
  return [...out.values()]
}
