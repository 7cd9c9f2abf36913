/**
 * The assistant's read tools (issue 16): each takes the REST endpoint's parameters with the same
 * names (the group's own schemas; a path `id` becomes an argument; `limit` a JSON number), answers
 * the REST response body and reads through the same use case as the REST handler (the service's
 * method for a key: range checks, operators in view, shaping). `get_reschedule_options` is a read
 * that needs `bookings.reschedule:write`, as its endpoint does.
 */
import { Effect, Schema } from "effect"
import { intValue, PartnerId, UuidPath } from "../../http/params.js"
import { Analytics } from "../../partner/analytics/Analytics.js"
import { AnalyticsSites, AnalyticsTours, SitesParams, ToursParams } from "../../partner/analytics/Api.js"
import { CurrentKey } from "../../partner/auth/security.js"
import { BookingListParams } from "../../partner/bookings/Api.js"
import { BookingDetail, BookingPage } from "../../partner/bookings/booking.js"
import { Bookings } from "../../partner/bookings/Bookings.js"
import { ManifestParams } from "../../partner/manifest/Api.js"
import { Manifest } from "../../partner/manifest/Manifest.js"
import { Manifest as ManifestBody } from "../../partner/manifest/schemas.js"
import { RescheduleOptions as RescheduleOptionsBody, RescheduleOptionsParams } from "../../partner/reschedules/Api.js"
import { RescheduleOptions } from "../../partner/reschedules/RescheduleOptions.js"
import { SalesParams, SalesSummary } from "../../partner/sales/Api.js"
import { Sales } from "../../partner/sales/Sales.js"
import { money } from "../confirmations/rules.js"
import type { AssistantTool } from "./tool.js"

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const

/** `46 CONFIRMED, 4 CANCELLED`: how many of each value, in order of first appearance. */
const countsOf = (values: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return [...counts].map(([value, n]) => `${n} ${value}`).join(", ")
}

const ListBookingsInput = Schema.Struct({
  ...BookingListParams.fields,
  limit: Schema.optional(intValue(1, 100)).annotations({ description: "1 to 100, default 50." })
})

export const listBookings: AssistantTool<typeof ListBookingsInput.Type, typeof BookingPage.Type> = {
  name: "list_bookings",
  title: "List bookings",
  description: "The operators' bookings, newest first, as GET /api/v1/bookings: filter by experience date " +
    "(`date_from`, `date_to`), `updated_since`, `status`, `partner_id`; page with `limit` (1 to 100) and the " +
    "previous answer's `next_cursor` as `cursor`. Guest email and phone only with guests.contact:read.",
  input: ListBookingsInput,
  output: BookingPage,
  outputIsJson: true,
  scope: "bookings:read",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(Bookings, (bookings) => Effect.flatMap(CurrentKey, (key) => bookings.page(key, input))),
  text: (page) =>
    page.data.length === 0
      ? "No bookings."
      : `${page.data.length} bookings (${countsOf(page.data.map((b) => b.status))}); each in structuredContent.` +
        (page.next_cursor ? ` More: cursor ${page.next_cursor}` : "")
}

const GetBookingInput = Schema.Struct({
  id: UuidPath.annotations({ description: "The booking id (`id` in list_bookings)." }),
  partner_id: Schema.optional(PartnerId)
})

export const getBooking: AssistantTool<typeof GetBookingInput.Type, typeof BookingDetail.Type> = {
  name: "get_booking",
  title: "One booking",
  description: "One booking with payment and commission, as GET /api/v1/bookings/{id}. Not found when it " +
    "belongs to none of the connection's operators (or not to `partner_id`).",
  input: GetBookingInput,
  output: BookingDetail,
  outputIsJson: true,
  scope: "bookings:read",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(
      Bookings,
      (bookings) => Effect.flatMap(CurrentKey, (key) => bookings.detail(key, input.id, input.partner_id))
    ),
  text: (b) =>
    `${b.confirmation_code} ${b.status}: ${b.tour.name ?? "?"} on ${b.experience_date ?? "no date"}` +
    `${b.start_time ? ` at ${b.start_time} (${b.timezone})` : ""}, ${b.participants ?? "?"} guests, ` +
    `${b.guest.name ?? "no name"}, ${money(b.amount_minor, b.currency)}, ${b.partner.name} (id ${b.id})`
}

export const getManifest: AssistantTool<typeof ManifestParams.Type, typeof ManifestBody.Type> = {
  name: "get_manifest",
  title: "Manifest of a day",
  description: "Who departs on `date` (the local day), grouped into departures, with each row's check-in, as " +
    "GET /api/v1/manifest. Row `id`s are what check_in_guests takes.",
  input: ManifestParams,
  output: ManifestBody,
  outputIsJson: true,
  scope: "manifest:read",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(Manifest, (manifest) => Effect.flatMap(CurrentKey, (key) => manifest.forKey(key, input))),
  text: (m) => {
    if (m.departures.length === 0) return `No departures on ${m.date}.`
    const sum = (count: (d: (typeof m.departures)[number]) => number) =>
      m.departures.reduce((total, d) => total + count(d), 0)
    return `Manifest of ${m.date}: ${m.departures.length} departures, ${sum((d) => d.passengers)} guests, ` +
      `${sum((d) => d.checked_in)} checked in, ${sum((d) => d.no_show)} no-show; ` +
      `the departures and rows (with their ids) in structuredContent.`
  }
}

export const getSales: AssistantTool<typeof SalesParams.Type, typeof SalesSummary.Type> = {
  name: "get_sales",
  title: "Sales summary",
  description: "Sales per day and in total from `from` to `to` (UTC days of booking creation), own sales and " +
    "other channels, as GET /api/v1/sales.",
  input: SalesParams,
  output: SalesSummary,
  scope: "finance:read",
  annotations: READ_ONLY,
  run: (input) => Effect.flatMap(Sales, (sales) => Effect.flatMap(CurrentKey, (key) => sales.forKey(key, input))),
  text: (s) =>
    [
      `Sales ${s.from} to ${s.to}.`,
      ...(s.panion.totals.length === 0
        ? ["Own sales: none."]
        : s.panion.totals.map((t) =>
          `Own sales, ${t.partner.name}: ${money(t.revenue_minor, t.currency)}, ${t.bookings} bookings.`
        )),
      s.other_channels.available
        ? `Other channels: ${money(s.other_channels.totals.revenue_minor, s.other_channels.currency)}, ` +
          `${s.other_channels.totals.bookings} bookings, ${s.other_channels.totals.participants} guests.`
        : `Other channels unavailable: ${s.other_channels.unavailable.map((u) => u.reason).join(", ")}.`
    ].join("\n")
}

export const getTourAnalytics: AssistantTool<typeof ToursParams.Type, typeof AnalyticsTours.Type> = {
  name: "get_tour_analytics",
  title: "Tour analytics",
  description: "Views, checkouts and bookings per tour and surface from `from` to `to`, as " +
    "GET /api/v1/analytics/tours.",
  input: ToursParams,
  output: AnalyticsTours,
  outputIsJson: true,
  scope: "analytics:read",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(Analytics, (analytics) => Effect.flatMap(CurrentKey, (key) => analytics.toursFor(key, input))),
  text: (a) =>
    a.surfaces.length === 0
      ? `No tour sales or views from ${a.from} to ${a.to}.`
      : [
        `Tours ${a.from} to ${a.to}, by surface (EUR):`,
        ...a.surfaces.map((x) =>
          `${x.surface.name}: ${x.bookings} bookings, ${money(x.revenue_minor, "EUR")}` +
          `${x.funnel ? `, ${x.funnel.views} views` : ""}`
        )
      ].join("\n")
}

export const getSiteAnalytics: AssistantTool<typeof SitesParams.Type, typeof AnalyticsSites.Type> = {
  name: "get_site_analytics",
  title: "Site analytics",
  description: "Traffic and conversion per site from `from` to `to`, as GET /api/v1/analytics/sites.",
  input: SitesParams,
  output: AnalyticsSites,
  outputIsJson: true,
  scope: "analytics:read",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(Analytics, (analytics) => Effect.flatMap(CurrentKey, (key) => analytics.sitesFor(key, input))),
  text: (a) =>
    a.sites.length === 0
      ? `No sites from ${a.from} to ${a.to}.`
      : a.sites.map((x) =>
        `${x.name} (${x.domain}): ${x.traffic.visitors} visitors, ${x.traffic.pageviews} pageviews, ` +
        `${x.traffic.sessions} sessions`
      ).join("\n")
}

const RescheduleOptionsInput = Schema.Struct({
  id: UuidPath.annotations({ description: "The booking id." }),
  ...RescheduleOptionsParams.fields
})

export const getRescheduleOptions: AssistantTool<
  typeof RescheduleOptionsInput.Type,
  typeof RescheduleOptionsBody.Type
> = {
  name: "get_reschedule_options",
  title: "Where a booking can move",
  description: "The departures on `date` a booking can move to at the same price, as " +
    "GET /api/v1/bookings/{id}/reschedule-options: pass an option's `start_time_id` and `rate_id` to " +
    "reschedule_booking. Reads only, but needs bookings.reschedule:write.",
  input: RescheduleOptionsInput,
  output: RescheduleOptionsBody,
  scope: "bookings.reschedule:write",
  annotations: READ_ONLY,
  run: (input) =>
    Effect.flatMap(RescheduleOptions, (options) =>
      Effect.flatMap(CurrentKey, (key) =>
        options.options(
          input.id,
          input.date,
          key.partners.map((p) => p.id)
        ))),
  text: (o) =>
    !o.available
      ? `Cannot move to ${o.date}${o.detail ? `: ${o.detail}` : ""}.`
      : o.options.map((x) =>
        `${x.start_time ?? "--:--"} ${x.label ?? ""} (${x.remaining} seats left): start_time_id ${x.start_time_id}` +
        `${x.rate_id ? `, rate_id ${x.rate_id}` : ""}`
      ).join("\n")
}
