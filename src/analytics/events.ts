/**
 * What one collected event becomes (Contract 1, `site_events`): the rules that turn the browser's
 * report and the request into a stored row, without I/O. The IP address and the user agent are
 * used here and dropped: only the keyed visitor hash and the coarse device, browser and OS remain.
 */
import Bowser from "bowser"
import { Either } from "effect"
import { createHmac } from "node:crypto"

export const EVENT_KINDS = ["pageview", "tour_view", "availability_check", "checkout_open", "checkout_attempt"] as const
export type EventKind = (typeof EVENT_KINDS)[number]

/** The stored event (one `site_events` row). */
export interface SiteEvent {
  readonly at: Date
  readonly siteId: string
  readonly kind: EventKind
  readonly visitor: string
  readonly newVisitor: boolean
  readonly tourId: string | null
  readonly path: string
  readonly referrerHost: string | null
  readonly channel: string
  readonly utmSource: string | null
  readonly utmMedium: string | null
  readonly utmCampaign: string | null
  readonly country: string | null
  readonly device: "desktop" | "mobile" | "tablet"
  readonly browser: string
  readonly os: string
  readonly bookingCode: string | null
}

/** Longest stored path and UTM value; longer ones are cut (the rest says nothing a report needs). */
export const MAX_PATH_LENGTH = 512
export const MAX_UTM_LENGTH = 200

/** The UTC day of an instant, YYYY-MM-DD. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10)

/** The visitor of a day: HMAC-SHA256 keyed with the day's salt over site|ip|user agent, hex. */
export const visitorHash = (salt: Uint8Array, siteId: string, ip: string, userAgent: string): string =>
  createHmac("sha256", salt).update(`${siteId}|${ip}|${userAgent}`).digest("hex")

/** What the page's URL and its referrer tell: the path (no query, no fragment), the source, UTM and click id. */
export interface PageFacts {
  readonly path: string
  readonly referrerHost: string | null
  readonly utmSource: string | null
  readonly utmMedium: string | null
  readonly utmCampaign: string | null
  readonly clickId: "gclid" | "msclkid" | null
}

const bareHost = (host: string) => host.toLowerCase().replace(/^www\./, "")

const utm = (params: URLSearchParams, name: string): string | null => {
  const value = params.get(name)?.trim() ?? ""
  return value === "" ? null : value.slice(0, MAX_UTM_LENGTH)
}

/**
 * The facts of a page URL (absolute http or https; anything else is refused with the reason) and
 * its referrer: a referrer that is not a URL, or is the page's own site (a click within the
 * site), counts as none.
 */
export const pageFacts = (url: string, referrer: string | null | undefined): Either.Either<PageFacts, string> => {
  let page: URL
  try {
    page = new URL(url)
  } catch {
    return Either.left("is not an absolute URL")
  }
  if (page.protocol !== "https:" && page.protocol !== "http:") return Either.left("must be an http or https URL")
  let referrerHost: string | null = null
  if (referrer !== undefined && referrer !== null && referrer.trim() !== "") {
    try {
      const r = new URL(referrer)
      if ((r.protocol === "https:" || r.protocol === "http:") && r.hostname !== "") {
        const host = bareHost(r.hostname)
        referrerHost = host === bareHost(page.hostname) ? null : host
      }
    } catch {
      referrerHost = null
    }
  }
  const params = page.searchParams
  return Either.right({
    path: (page.pathname || "/").slice(0, MAX_PATH_LENGTH),
    referrerHost,
    utmSource: utm(params, "utm_source"),
    utmMedium: utm(params, "utm_medium"),
    utmCampaign: utm(params, "utm_campaign"),
    clickId: params.has("gclid") ? "gclid" : params.has("msclkid") ? "msclkid" : null
  })
}

/** Device class, browser and OS names of a user agent (bowser); what it cannot tell is desktop / Unknown. */
export const deviceOf = (userAgent: string): Pick<SiteEvent, "device" | "browser" | "os"> => {
  let parsed: Bowser.Parser.ParsedResult
  try {
    // bowser refuses an empty user agent (the collector drops those before).
    parsed = Bowser.parse(userAgent)
  } catch {
    return { device: "desktop", browser: "Unknown", os: "Unknown" }
  }
  const type = parsed.platform.type
  return {
    device: type === "mobile" || type === "tablet" ? type : "desktop",
    browser: parsed.browser.name?.trim() || "Unknown",
    os: parsed.os.name?.trim() || "Unknown"
  }
}

/**
 * A country from a trusted proxy's header (ISO 3166-1 alpha-2, as Cloudflare's `CF-IPCountry`);
 * the codes proxies use for "unknown" or Tor (XX, T1, ZZ) and anything else are null.
 */
export const countryFromHeader = (value: string | undefined): string | null => {
  const code = value?.trim().toUpperCase() ?? ""
  return /^[A-Z]{2}$/.test(code) && !["XX", "T1", "ZZ"].includes(code) ? code : null
}

/**
 * The client's address: the connection's peer, or (when a trusted proxy is configured to set it)
 * the last address in that proxy's header, the one the proxy itself saw.
 */
export const clientIp = (peer: string | undefined, proxyHeader: string | undefined): string => {
  if (proxyHeader !== undefined) {
    const last = proxyHeader.split(",").map((s) => s.trim()).filter((s) => s !== "").at(-1)
    if (last !== undefined) return last
  }
  return peer ?? ""
}

/** The first instant of the UTC month of `at`. */
export const monthStart = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))

/** The first instant of the month `months` after the UTC month of `at`. */
export const addMonths = (at: Date, months: number): Date =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1))

/** The partition of `site_events` that holds the month starting at `month` (migration 0025). */
export const partitionName = (month: Date): string =>
  `site_events_y${month.getUTCFullYear()}m${String(month.getUTCMonth() + 1).padStart(2, "0")}`

/** The month a partition name stands for, or undefined for any other name. */
export const partitionMonth = (name: string): Date | undefined => {
  const m = /^site_events_y(\d{4})m(\d{2})$/.exec(name)
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)) : undefined
}
