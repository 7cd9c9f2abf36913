/**
 * The channel grouping (src/analytics/channel.ts): GA4's rules in Plausible's order, case by case,
 * and properties over any input (always one of the 17 channels; case and surrounding spaces never
 * matter; nothing at all is Direct; any referrer with no UTM is never Direct, never paid).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import { type ChannelInput, channelOf, CHANNELS } from "../../src/analytics/channel.js"
import { pageFacts } from "../../src/analytics/events.js"

const none: ChannelInput = { referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, clickId: null }
const ch = (input: Partial<ChannelInput>) => channelOf({ ...none, ...input })

describe("channelOf", () => {
  it("follows the GA4 rules in Plausible's order", () => {
    const cases: Array<[Partial<ChannelInput>, string]> = [
      [{}, "Direct"],
      [{ referrerHost: "google.com" }, "Organic Search"],
      [{ referrerHost: "www.google.co.uk" }, "Organic Search"],
      [{ referrerHost: "duckduckgo.com" }, "Organic Search"],
      [{ referrerHost: "google.com", clickId: "gclid" }, "Paid Search"],
      [{ referrerHost: "bing.com", clickId: "msclkid" }, "Paid Search"],
      [{ referrerHost: "bing.com", clickId: "gclid" }, "Organic Search"],
      [{ utmSource: "google", utmMedium: "cpc" }, "Paid Search"],
      [{ utmSource: "adwords" }, "Paid Search"],
      [{ referrerHost: "l.facebook.com" }, "Organic Social"],
      [{ utmSource: "facebook", utmMedium: "paid_social" }, "Paid Social"],
      [{ utmSource: "fb_ads" }, "Paid Social"],
      [{ utmSource: "newsletter-nov", utmMedium: "social" }, "Organic Social"],
      [{ referrerHost: "youtube.com" }, "Organic Video"],
      [{ utmSource: "youtube", utmMedium: "cpv" }, "Paid Video"],
      [{ utmMedium: "video" }, "Organic Video"],
      [{ utmMedium: "banner" }, "Display"],
      [{ utmMedium: "cpm" }, "Display"],
      [{ utmSource: "partner", utmMedium: "ppc" }, "Paid Other"],
      [{ referrerHost: "amazon.com" }, "Organic Shopping"],
      [{ utmCampaign: "winter-shopping" }, "Organic Shopping"],
      [{ utmCampaign: "winter-shopping", utmMedium: "cpc" }, "Paid Shopping"],
      [{ utmCampaign: "pmax cross-network", utmMedium: "cpc" }, "Cross-network"],
      [{ referrerHost: "mail.google.com" }, "Email"],
      [{ utmSource: "newsletter" }, "Email"],
      [{ utmMedium: "e-mail" }, "Email"],
      [{ utmMedium: "affiliate" }, "Affiliates"],
      [{ utmMedium: "audio" }, "Audio"],
      [{ utmSource: "sms" }, "SMS"],
      [{ utmMedium: "referral" }, "Referral"],
      [{ referrerHost: "visitnorway.com" }, "Referral"],
      [{ utmSource: "partner-blog" }, "Referral"],
      // The UTM source wins over the referrer, as in Plausible.
      [{ referrerHost: "google.com", utmSource: "facebook" }, "Organic Social"]
    ]
    for (const [input, expected] of cases) expect(ch(input), JSON.stringify(input)).toBe(expected)
  })

  const text = fc.option(fc.string({ maxLength: 30 }), { nil: null })
  const host = fc.option(fc.domain(), { nil: null })
  const input = fc.record({
    referrerHost: host,
    utmSource: text,
    utmMedium: text,
    utmCampaign: text,
    clickId: fc.constantFrom(null, "gclid" as const, "msclkid" as const)
  })

  it("always answers one of the channels", () => {
    fc.assert(fc.property(input, (i) => (CHANNELS as ReadonlyArray<string>).includes(channelOf(i))))
  })

  it("ignores the case and surrounding spaces of UTM values", () => {
    const shout = (s: string | null) => (s === null ? null : `  ${s.toUpperCase()} `)
    fc.assert(fc.property(input, (i) =>
      channelOf(i) ===
        channelOf({
          ...i,
          utmSource: shout(i.utmSource),
          utmMedium: shout(i.utmMedium),
          utmCampaign: shout(i.utmCampaign)
        })))
  })

  it("a referrer without UTM parameters or click id is never Direct and never paid", () => {
    fc.assert(fc.property(fc.domain(), (referrerHost) => {
      const c = ch({ referrerHost })
      return c !== "Direct" && !c.startsWith("Paid") && c !== "Display" && c !== "Cross-network"
    }))
  })

  it("blank UTM values are the same as none", () => {
    fc.assert(
      fc.property(
        host,
        fc.constantFrom("", " ", "\t"),
        (referrerHost, blank) =>
          ch({ referrerHost, utmSource: blank, utmMedium: blank, utmCampaign: blank }) === ch({ referrerHost })
      )
    )
  })
})

describe("pageFacts", () => {
  it("keeps the path only, reads UTM and click ids, and drops a self-referral", () => {
    const facts = pageFacts(
      "https://www.fjord.example/tours/a?utm_source=Fb&utm_medium=%20social%20&gclid=1&secret=2#x",
      "https://fjord.example/"
    )
    expect(facts).toEqual(Either.right({
      path: "/tours/a",
      referrerHost: null,
      utmSource: "Fb",
      utmMedium: "social",
      utmCampaign: null,
      clickId: "gclid"
    }))
    expect(Either.getOrThrow(pageFacts("https://a.example/", "https://www.Google.com/search?q=x")).referrerHost)
      .toBe("google.com")
    expect(Either.getOrThrow(pageFacts("https://a.example/", "android-app://com.x")).referrerHost).toBeNull()
    expect(Either.isLeft(pageFacts("/relative", null))).toBe(true)
    expect(Either.isLeft(pageFacts("javascript:alert(1)", null))).toBe(true)
  })

  it("never keeps a query or fragment, whatever the URL", () => {
    fc.assert(fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
      const facts = pageFacts(url, null)
      return Either.isRight(facts) && !facts.right.path.includes("?") && !facts.right.path.includes("#")
    }))
  })
})
