/**
 * The acquisition channel of a visit (Contract 1 `channel`): GA4's default channel grouping, in the
 * rule order Plausible applies it (plausible/analytics, Plausible.Ingestion.Acquisition), from the
 * referrer, the UTM parameters and the ad click id of the landing URL. Plausible's own additions
 * that GA4 lacks (AI assistants, mobile push) are not channels here: such visits fall through to
 * Referral or Direct. Pure: no I/O.
 */
import { categoryOf, isPaidSource, knownReferrer } from "./sources.js"

export const CHANNELS = [
  "Direct",
  "Organic Search",
  "Paid Search",
  "Organic Social",
  "Paid Social",
  "Email",
  "Affiliates",
  "Display",
  "Referral",
  "Organic Video",
  "Paid Video",
  "Audio",
  "SMS",
  "Cross-network",
  "Organic Shopping",
  "Paid Shopping",
  "Paid Other"
] as const

export type Channel = (typeof CHANNELS)[number]

export interface ChannelInput {
  /** The referring host (self-referrals already removed), lower case, or null. */
  readonly referrerHost: string | null
  readonly utmSource: string | null
  readonly utmMedium: string | null
  readonly utmCampaign: string | null
  /** An ad click id on the landing URL: `gclid` (Google Ads) or `msclkid` (Microsoft Ads). */
  readonly clickId?: "gclid" | "msclkid" | null
}

const EMAIL_TAGS = ["email", "e-mail", "e_mail", "e mail", "newsletter"]
const SOCIAL_MEDIUMS = new Set(["social", "social-network", "social-media", "sm", "social network", "social media"])
const DISPLAY_MEDIUMS = new Set(["display", "banner", "expandable", "interstitial", "cpm"])

const paidMedium = (medium: string) => /^(.*cp.*|ppc|retargeting|paid.*)$/.test(medium)
const shoppingCampaign = (campaign: string) => /^(.*(([^a-df-z]|^)shop|shopping).*)$/.test(campaign)

/**
 * The source the rules look at, as Plausible's `source`: `utm_source` when given, else the known
 * name of the referring host, else the host itself.
 */
const sourceOf = (input: ChannelInput): string => {
  const utm = input.utmSource?.trim().toLowerCase() ?? ""
  if (utm !== "") return utm
  if (input.referrerHost === null || input.referrerHost === "") return ""
  return (knownReferrer(input.referrerHost)?.name ?? input.referrerHost).toLowerCase()
}

export const channelOf = (input: ChannelInput): Channel => {
  const source = sourceOf(input)
  const medium = input.utmMedium?.trim().toLowerCase() ?? ""
  const campaign = input.utmCampaign?.trim().toLowerCase() ?? ""
  const utmSource = input.utmSource?.trim().toLowerCase() ?? ""
  const category = source === "" ? undefined : categoryOf(source)
  const paidSource = isPaidSource(utmSource)
  const isShopping = category === "shopping" || shoppingCampaign(campaign)

  if (campaign.includes("cross-network")) return "Cross-network"
  if (isShopping && paidMedium(medium)) return "Paid Shopping"
  if (
    (category === "search" && (paidMedium(medium) || paidSource)) ||
    (source === "google" && input.clickId === "gclid") ||
    (source === "bing" && input.clickId === "msclkid")
  ) return "Paid Search"
  if (category === "social" && (paidMedium(medium) || paidSource)) return "Paid Social"
  if (category === "video" && (paidMedium(medium) || paidSource)) return "Paid Video"
  if (DISPLAY_MEDIUMS.has(medium)) return "Display"
  if (paidMedium(medium)) return "Paid Other"
  if (isShopping) return "Organic Shopping"
  if (category === "social" || SOCIAL_MEDIUMS.has(medium)) return "Organic Social"
  if (category === "video" || medium.includes("video")) return "Organic Video"
  if (category === "search") return "Organic Search"
  if (category === "email" || EMAIL_TAGS.some((t) => utmSource.includes(t) || medium.includes(t))) return "Email"
  if (medium === "affiliate") return "Affiliates"
  if (medium === "audio") return "Audio"
  if (utmSource === "sms" || medium === "sms") return "SMS"
  if (["referral", "app", "link"].includes(medium) || source !== "") return "Referral"
  return "Direct"
}
