/** The tour catalogue as the Partner API shows it (spec §2 "Tour") and its pure rules. */
import { Schema } from "effect"
import { DateString, LocalTime } from "../../domain/dates.js"

const nullable = <S extends Schema.Schema.Any>(s: S) => Schema.NullOr(s)

/** Difficulty levels (Bókun's, in lower case); a code for clients to show in their own words. */
export const DIFFICULTIES = ["very_easy", "easy", "moderate", "challenging", "demanding", "extreme"] as const

// ---------------------------------------------------------------------------------------------
// Locale

/** Largest `limit` of GET /tours (default 50). */
export const TOUR_LIST_MAX = 100
export const TOUR_LIST_DEFAULT = 50

/** The `locale` parameter: a language tag such as `nb`, `pt-BR` or `de_DE` (at most 35 characters). */
export const LocaleParam = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8}){0,4}$/, {
    message: () => "must be a language tag such as nb, de or pt-BR"
  }),
  Schema.maxLength(35, { message: () => "must be a language tag such as nb, de or pt-BR" })
).annotations({
  description:
    "Language of the translated fields: an ISO 639-1 code (nb, de, fr …), region ignored (pt-BR reads pt); " +
    "`no` reads `nb`. Omit for English. A tour without that translation answers in English; `locale` in the " +
    "response says which applied."
})

/**
 * The catalogue locale a request asks for: the tag's language in lower case (the region is ignored),
 * Norwegian `no` read as bokmål `nb`; English when none is given.
 */
export const catalogueLocale = (param: string | undefined): string => {
  if (param === undefined) return "en"
  const language = param.split(/[-_]/)[0]!.toLowerCase()
  return language === "no" ? "nb" : language
}

// ---------------------------------------------------------------------------------------------
// Pure rules

/** Usual departures: sorted, each once. */
export const departureTimes = (times: ReadonlyArray<string>): Array<string> => [...new Set(times)].sort()

export interface Parties {
  /** The tour's operator. */
  readonly operatorId: string
  /** Owner of the site the tour is shown for. */
  readonly hostId: string
  /** Seller of record on that site. */
  readonly sellerId: string
}

/** `is_seller`: the operator is the seller of record; `is_host`: the site's business both sells and runs it. */
export const roles = (p: Parties) => ({
  is_seller: p.sellerId === p.operatorId,
  is_host: p.hostId === p.operatorId && p.sellerId === p.operatorId
})

// ---------------------------------------------------------------------------------------------
// Resources

export const TourOperator = Schema.Struct({
  name: Schema.String,
  legal_name: nullable(Schema.String),
  org_number: nullable(Schema.String),
  is_seller: Schema.Boolean.annotations({ description: "true when the operator is also the seller of record." }),
  is_host: Schema.Boolean.annotations({
    description: "true only when the business behind the site (its owner) both sells and runs the tour."
  })
}).annotations({ identifier: "TourOperator", description: "Who runs the tour." })

export const TourSeller = Schema.Struct({
  name: Schema.String,
  legal_name: nullable(Schema.String),
  org_number: nullable(Schema.String)
}).annotations({ identifier: "TourSeller", description: "Seller of record: the business the guest buys from." })

export const FromPrice = Schema.Struct({
  amount_minor: Schema.Int,
  currency: Schema.String.annotations({ description: "ISO 4217" })
}).annotations({ identifier: "FromPrice" })

export const Season = Schema.Struct({
  known: Schema.Boolean.annotations({
    description: "false when the booking system did not answer in time or was not asked yet: never read it as closed."
  }),
  next_available_date: nullable(DateString).annotations({
    description: "First day from today with a bookable departure in the next 12 months (tour's local day); null when " +
      "nothing is on sale or not known."
  })
}).annotations({ identifier: "Season" })

export const Rating = Schema.Struct({
  average: Schema.Number.annotations({ description: "Out of 5." }),
  count: Schema.Int
}).annotations({
  identifier: "Rating",
  description: "The booking system's rating, not the service's verified reviews."
})

const PlainList = Schema.Array(Schema.String)

export const tourSummaryFields = {
  id: Schema.String.annotations({ description: "The tour id; also the checkout `activity_id`." }),
  slug: nullable(Schema.String),
  title: Schema.String.annotations({ description: "Translated." }),
  excerpt: nullable(Schema.String).annotations({ description: "Short plain-text teaser. Translated." }),
  photos: Schema.Array(Schema.String).annotations({ description: "Photo URLs in display order, cover first." }),
  duration_minutes: nullable(Schema.Int),
  priced_per_booking: Schema.Boolean.annotations({ description: "true when the price is for the whole group." }),
  languages: Schema.Array(Schema.String).annotations({ description: "Guide languages, ISO 639-1 codes." }),
  from_price: nullable(FromPrice).annotations({
    description: "Lowest regular adult price over the bookable season, without date-based checkout discounts, " +
      "ignoring the next 7 days. null until computed, or when nothing is on sale."
  }),
  season: Season,
  rating: nullable(Rating),
  operator: nullable(TourOperator),
  seller: nullable(TourSeller),
  locale: Schema.String.annotations({
    description: "The translation applied to this tour, or `en` when it has none for the requested locale."
  })
}

export const TourSummary = Schema.Struct(tourSummaryFields).annotations({ identifier: "TourSummary" })
export type TourSummary = typeof TourSummary.Type

export const TourPage = Schema.Struct({
  data: Schema.Array(TourSummary),
  next_cursor: nullable(Schema.String).annotations({
    description: "Pass as `cursor` for the next page; null on the last page."
  })
}).annotations({ identifier: "TourPage" })

export const MeetingPoint = Schema.Struct({
  name: Schema.String.annotations({ description: "Translated." }),
  address: nullable(Schema.String),
  lat: nullable(Schema.Number),
  lng: nullable(Schema.Number)
}).annotations({ identifier: "MeetingPoint" })

export const Cancellation = Schema.Struct({
  title: nullable(Schema.String).annotations({ description: "The policy in words. Translated." }),
  free_hours: nullable(Schema.Int).annotations({
    description: "Hours before departure up to which cancelling is free; null when not stated."
  })
}).annotations({ identifier: "Cancellation" })

export const PricingCategory = Schema.Struct({
  id: Schema.String.annotations({ description: "The booking system's category id where the tour is linked to one." }),
  is_default: Schema.Boolean.annotations({
    description: "The category prices are quoted for (usually Adult); at most one."
  }),
  title: Schema.String.annotations({ description: "E.g. Adult, Child. Translated." }),
  min_age: nullable(Schema.Int).annotations({ description: "Youngest age in the category, inclusive." }),
  max_age: nullable(Schema.Int).annotations({ description: "Oldest age in the category, inclusive." })
}).annotations({ identifier: "PricingCategory" })

export const Rate = Schema.Struct({
  id: Schema.String,
  title: Schema.String.annotations({ description: "Translated." }),
  description: nullable(Schema.String).annotations({ description: "Plain text. Translated." })
}).annotations({ identifier: "Rate" })

export const LinkedProduct = Schema.Struct({
  label: Schema.String,
  language: nullable(Schema.String).annotations({
    description: "ISO 639-1, e.g. the guide language of the linked tour."
  }),
  tour_id: nullable(Schema.String).annotations({
    description:
      "The linked tour's id when it is in this catalogue too (readable with GET /tours/{id}); otherwise null."
  })
}).annotations({ identifier: "LinkedProduct" })

const htmlNote =
  "Clean HTML: only p, br, strong, b, em, i, u, ul, ol, li, h2, h3, h4, span, and a with href (absolute " +
  "http, https or mailto), target and rel; no other attributes, no styles or scripts. Empty string when none. Translated."

const plainItems = (what: string) =>
  PlainList.annotations({
    description:
      `${what} Each element is one plain-text item (no HTML: render it as text), in display order. Translated.`
  })

export const TourDetail = Schema.Struct({
  ...tourSummaryFields,
  timezone: Schema.String.annotations({ description: "IANA time zone of `departure_times` and of the tour's days." }),
  description_html: Schema.String.annotations({ description: htmlNote }),
  included_html: Schema.String.annotations({ description: htmlNote }),
  excluded_html: Schema.String.annotations({ description: htmlNote }),
  inclusions: plainItems("What the price includes, e.g. \"Hot drinks on board\"."),
  exclusions: plainItems("What it does not include, e.g. \"Hotel pickup\"."),
  highlights: plainItems("Selling points."),
  know_before: plainItems("What a guest should know before booking."),
  meeting_point: nullable(MeetingPoint),
  cancellation: Cancellation,
  min_age: nullable(Schema.Int),
  difficulty: nullable(Schema.Literal(...DIFFICULTIES)).annotations({
    description: "A code, not translated: very_easy, easy, moderate, challenging, demanding, extreme."
  }),
  departure_times: Schema.Array(LocalTime).annotations({
    description: "Usual local start times (HH:MM in `timezone`), sorted, each once. Live departures: availability."
  }),
  pricing_categories: Schema.Array(PricingCategory),
  rates: Schema.Array(Rate),
  linked_products: Schema.Array(LinkedProduct),
  checkout: Schema.Struct({
    activity_id: Schema.String.annotations({ description: "Pass to the service's checkout; equals `id`." })
  })
}).annotations({ identifier: "TourDetail" })
export type TourDetail = typeof TourDetail.Type
