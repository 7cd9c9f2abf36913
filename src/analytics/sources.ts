/**
 * Known referrers: a referring host's name (as reports show it) and its GA4 source category, the
 * categories the channel grouping reads (./channel.ts). A short list of the sources that matter
 * for tour sites (GA4's own list, which Plausible ships as ga4-source-categories.csv, has ~800
 * entries, most of them rare); a host not listed is a plain referral. Pure data, no I/O.
 */

export type SourceCategory = "search" | "social" | "video" | "shopping" | "email"

interface KnownSource {
  readonly name: string
  readonly category: SourceCategory
  /** Registrable domains (any subdomain matches) or exact hosts. */
  readonly hosts: ReadonlyArray<string>
}

const KNOWN: ReadonlyArray<KnownSource> = [
  {
    name: "Google",
    category: "search",
    hosts: [
      "google.com",
      "google.no",
      "google.de",
      "google.co.uk",
      "google.fr",
      "google.es",
      "google.it",
      "google.nl",
      "google.se",
      "google.dk",
      "google.pt",
      "google.pl",
      "google.ch",
      "google.at",
      "google.be",
      "google.fi",
      "google.ie",
      "google.ca",
      "google.com.au",
      "google.co.jp",
      "google.com.br",
      "google.co.in"
    ]
  },
  { name: "Bing", category: "search", hosts: ["bing.com"] },
  { name: "DuckDuckGo", category: "search", hosts: ["duckduckgo.com"] },
  { name: "Yahoo!", category: "search", hosts: ["yahoo.com", "search.yahoo.com", "yahoo.co.jp"] },
  { name: "Ecosia", category: "search", hosts: ["ecosia.org"] },
  { name: "Brave", category: "search", hosts: ["search.brave.com"] },
  { name: "Qwant", category: "search", hosts: ["qwant.com"] },
  { name: "Startpage", category: "search", hosts: ["startpage.com"] },
  { name: "Yandex", category: "search", hosts: ["yandex.ru", "yandex.com"] },
  { name: "Baidu", category: "search", hosts: ["baidu.com"] },
  { name: "Naver", category: "search", hosts: ["naver.com"] },
  { name: "Seznam", category: "search", hosts: ["seznam.cz"] },
  { name: "Kvasir", category: "search", hosts: ["kvasir.no"] },
  {
    name: "Facebook",
    category: "social",
    hosts: ["facebook.com", "fb.com", "m.facebook.com", "l.facebook.com", "lm.facebook.com"]
  },
  { name: "Instagram", category: "social", hosts: ["instagram.com", "l.instagram.com"] },
  { name: "X (Twitter)", category: "social", hosts: ["twitter.com", "x.com", "t.co"] },
  { name: "LinkedIn", category: "social", hosts: ["linkedin.com", "lnkd.in"] },
  { name: "Pinterest", category: "social", hosts: ["pinterest.com", "pinterest.de", "pinterest.co.uk", "pin.it"] },
  { name: "Reddit", category: "social", hosts: ["reddit.com", "old.reddit.com"] },
  { name: "TikTok", category: "social", hosts: ["tiktok.com"] },
  { name: "Snapchat", category: "social", hosts: ["snapchat.com"] },
  { name: "Threads", category: "social", hosts: ["threads.net", "threads.com"] },
  { name: "Bluesky", category: "social", hosts: ["bsky.app"] },
  { name: "Mastodon", category: "social", hosts: ["mastodon.social"] },
  { name: "WhatsApp", category: "social", hosts: ["whatsapp.com", "web.whatsapp.com"] },
  { name: "Telegram", category: "social", hosts: ["t.me", "telegram.org", "web.telegram.org"] },
  {
    name: "Tripadvisor",
    category: "social",
    hosts: ["tripadvisor.com", "tripadvisor.no", "tripadvisor.co.uk", "tripadvisor.de"]
  },
  { name: "Hacker News", category: "social", hosts: ["news.ycombinator.com"] },
  { name: "YouTube", category: "video", hosts: ["youtube.com", "m.youtube.com", "youtu.be"] },
  { name: "Vimeo", category: "video", hosts: ["vimeo.com"] },
  { name: "Twitch", category: "video", hosts: ["twitch.tv"] },
  { name: "Amazon", category: "shopping", hosts: ["amazon.com", "amazon.de", "amazon.co.uk"] },
  { name: "eBay", category: "shopping", hosts: ["ebay.com", "ebay.de"] },
  { name: "Etsy", category: "shopping", hosts: ["etsy.com"] },
  { name: "Gmail", category: "email", hosts: ["mail.google.com"] },
  {
    name: "Outlook.com",
    category: "email",
    hosts: ["outlook.live.com", "outlook.office.com", "outlook.office365.com"]
  },
  { name: "Yahoo! Mail", category: "email", hosts: ["mail.yahoo.com"] },
  { name: "Proton Mail", category: "email", hosts: ["mail.proton.me"] }
]

const BY_HOST = new Map<string, KnownSource>()
const BY_NAME = new Map<string, KnownSource>()
for (const source of KNOWN) {
  for (const host of source.hosts) BY_HOST.set(host, source)
  BY_NAME.set(source.name.toLowerCase(), source)
}

/** UTM sources and names that people write by hand for the same sources (`utm_source=fb`). */
const ALIASES: Record<string, string> = {
  fb: "facebook",
  ig: "instagram",
  twitter: "x (twitter)",
  x: "x (twitter)",
  yt: "youtube",
  li: "linkedin",
  google: "google",
  bing: "bing"
}

/** `utm_source` values that mean a paid placement whatever the medium (as Plausible's paid sources), by network. */
const PAID_SOURCES: Record<string, string> = {
  adwords: "google",
  google_ads: "google",
  googleads: "google",
  gads: "google",
  facebook_ad: "facebook",
  facebook_ads: "facebook",
  fb_ad: "facebook",
  fb_ads: "facebook",
  fbads: "facebook",
  meta_ads: "facebook",
  instagram_ad: "instagram",
  instagram_ads: "instagram",
  ig_ad: "instagram",
  ig_ads: "instagram",
  "yt-ads": "youtube",
  youtube_ads: "youtube",
  bing_ads: "bing",
  microsoft_ads: "bing",
  msads: "bing",
  tiktok_ads: "tiktok",
  linkedin_ads: "linkedin",
  pinterest_ads: "pinterest",
  reddit_ads: "reddit",
  twitter_ads: "x (twitter)",
  x_ads: "x (twitter)",
  snapchat_ads: "snapchat"
}

/** The known source of a referring host (its most specific listed suffix), if any. */
export const knownReferrer = (host: string): KnownSource | undefined => {
  let h = host.toLowerCase()
  for (;;) {
    const found = BY_HOST.get(h)
    if (found !== undefined) return found
    const dot = h.indexOf(".")
    if (dot < 0 || h.indexOf(".", dot + 1) < 0) return undefined
    h = h.slice(dot + 1)
  }
}

/** Whether a `utm_source` names a paid placement whatever the medium (`adwords`, `fb_ads`). */
export const isPaidSource = (utmSource: string) => Object.hasOwn(PAID_SOURCES, utmSource.trim().toLowerCase())

/** The category of a source name (a known referrer's name or a `utm_source`), case-insensitive. */
export const categoryOf = (source: string): SourceCategory | undefined => {
  const s = source.trim().toLowerCase()
  const name = (Object.hasOwn(ALIASES, s) ? ALIASES[s] : undefined) ??
    (Object.hasOwn(PAID_SOURCES, s) ? PAID_SOURCES[s] : undefined) ?? s
  return (BY_NAME.get(name) ?? knownReferrer(s))?.category
}
