/**
 * What a desk terminal can sell (Quickbook spec §4; issue 6 items 4-5): the published tours, linked
 * to a booking system, on the sites its selling operator owns, whether the operator's own or resold
 * by it (`site_tours.sold_by = 'site_owner'`); their slots of a day read live through the
 * BookingSystem port within a deadline (`TOUR_AVAILABILITY_TIMEOUT_MS`); and quotes, stored in
 * `quickbook_sales` (nothing is held). Rules: src/domain/quickbookSales.ts.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { QuickbookConfig, TourAvailabilityConfig } from "../config.js"
import { localDayAt } from "../domain/localDay.js"
import { QbBadRequest, QbConflict, QbForbidden, QbUnavailable } from "../domain/quickbookErrors.js"
import {
  type Category,
  DESK_VAT_PERCENT,
  guestTypesOf,
  newReference,
  orderLineText,
  QUOTE_MAX_ENTRIES,
  QUOTE_MAX_GUESTS,
  QUOTE_VALIDITY_MINUTES,
  slotsOf,
  vatIncluded
} from "../domain/quickbookSales.js"
import { BookingSystem } from "../ports/BookingSystem.js"
import { BookingSystemAccounts } from "./BookingSystemAccounts.js"
import type { QuickbookCaller } from "./QuickbookKeys.js"
import { readDepartures } from "./readDepartures.js"

export interface DeskTourRow {
  readonly id: string
  readonly title: string
  readonly operator_name: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly departure_times: Array<string>
  readonly product_id: string
  readonly account_id: string
  readonly categories: Array<Category>
  readonly rate_ids: Array<string>
}

export interface QuoteRequest {
  readonly activityId: string
  readonly start: { readonly date: string; readonly time: string }
  readonly guests: ReadonlyArray<{ readonly type: string; readonly count: number }>
}

const notSellable = (detail: string) => new QbForbidden({ code: "tour_not_sellable_here", detail })

export class QuickbookTours extends Effect.Service<QuickbookTours>()("QuickbookTours", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig
    const qbConfig = yield* QuickbookConfig

    const rows = (operatorId: string, tourId: string | null) =>
      sql<DeskTourRow>`
        SELECT t.id, t.title, o.name AS operator_name, t.timezone, t.currency, t.duration_minutes, t.departure_times,
          t.booking_system_product_id AS product_id, o.booking_system_account_id AS account_id,
          COALESCE((SELECT json_agg(json_build_object('id', pc.id, 'title', pc.title, 'isDefault', pc.is_default,
              'minAge', pc.min_age, 'maxAge', pc.max_age) ORDER BY pc.position, pc.id)
            FROM tour_pricing_categories pc WHERE pc.tour_id = t.id), '[]'::json) AS categories,
          COALESCE((SELECT array_agg(r.id ORDER BY r.position, r.id) FROM tour_rates r WHERE r.tour_id = t.id), '{}') AS rate_ids
        FROM tours t JOIN operators o ON o.id = t.operator_id
        WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL AND o.booking_system_account_id IS NOT NULL
          AND ${tourId === null ? sql`true` : sql`t.id = ${tourId}`}
          AND EXISTS (
            SELECT 1 FROM site_tours st JOIN sites s ON s.id = st.site_id
            WHERE st.tour_id = t.id AND s.owner_operator_id = ${operatorId}
              AND (t.operator_id = ${operatorId} OR st.sold_by = 'site_owner'))
        ORDER BY t.title, t.id`.pipe(Effect.orDie)

    const sellable = (operatorId: string) => rows(operatorId, null).pipe(Effect.withSpan("QuickbookTours.sellable"))

    const sellableTour = (operatorId: string, tourId: string) =>
      Effect.flatMap(rows(operatorId, tourId), ([row]) =>
        row ? Effect.succeed(row) : Effect.fail(notSellable(`tour ${tourId} is not sold by operator ${operatorId}`)))

    /** The departures of the tour's local day, within the deadline; 503 provider_unavailable otherwise. */
    const departuresOn = (tour: DeskTourRow, date: string) =>
      Effect.gen(function*() {
        const found = yield* Effect.either(accounts.byId(tour.account_id))
        if (found._tag === "Left") {
          return yield* new QbUnavailable({ code: "provider_unavailable", detail: found.left.message })
        }
        return yield* readDepartures(
          bookingSystem,
          found.right.account,
          { productId: tour.product_id, from: date, to: date },
          Duration.millis(config.availabilityTimeoutMs)
        ).pipe(
          Effect.mapError((e) => new QbUnavailable({ code: "provider_unavailable", detail: `${e._tag} ${e.reason}: ${e.detail}` }))
        )
      })

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const slotsFor = (tour: DeskTourRow, date: string) =>
      Effect.gen(function*() {
        const departures = yield* departuresOn(tour, date)
        return slotsOf(departures, {
          date,
          timeZone: tour.timezone,
          currency: tour.currency,
          rateIds: tour.rate_ids,
          guestTypes: guestTypesOf(tour.categories),
          now: yield* now
        })
      })

    /** GET /tours: every sellable tour with its guest types, and whether the day has a slot with seats (null: unknown). */
    const list = (operatorId: string, date: string | undefined) =>
      Effect.gen(function*() {
        const tours = yield* sellable(operatorId)
        const at = yield* now
        return yield* Effect.forEach(tours, (tour) =>
          Effect.gen(function*() {
            const day = date ?? localDayAt(tour.timezone, at)
            const slots = yield* Effect.option(slotsFor(tour, day))
            return {
              tour,
              date: day,
              available: Option.match(slots, { onNone: () => null, onSome: (s) => s.some((x) => !x.soldOut && x.guests.length > 0) })
            }
          }), { concurrency: 4 })
      }).pipe(Effect.withSpan("QuickbookTours.list"))

    const slots = (operatorId: string, tourId: string, date: string | undefined) =>
      Effect.gen(function*() {
        const tour = yield* sellableTour(operatorId, tourId)
        const day = date ?? localDayAt(tour.timezone, yield* now)
        return { tour, date: day, slots: yield* slotsFor(tour, day) }
      }).pipe(Effect.withSpan("QuickbookTours.slots"))

    const quote = (caller: QuickbookCaller, q: QuoteRequest) =>
      Effect.gen(function*() {
        const { terminal, key } = caller
        if (q.guests.length > QUOTE_MAX_ENTRIES) {
          return yield* new QbBadRequest({ code: "invalid_request", detail: `at most ${QUOTE_MAX_ENTRIES} guest entries` })
        }
        const total = q.guests.reduce((n, g) => n + g.count, 0)
        if (total > QUOTE_MAX_GUESTS) {
          return yield* new QbBadRequest({ code: "invalid_request", detail: `at most ${QUOTE_MAX_GUESTS} guests in all` })
        }
        const tour = yield* sellableTour(terminal.operatorId, q.activityId)
        const [merchant] = yield* sql<{ merchant_id: string }>`
          SELECT merchant_id FROM operator_payment_accounts WHERE operator_id = ${terminal.operatorId}`.pipe(Effect.orDie)
        if (!merchant) return yield* notSellable(`operator ${terminal.operatorId} has no merchant at the payment provider`)
        const types = guestTypesOf(tour.categories)
        // Entries of one type are added up, in the order first given.
        const counts = new Map<string, number>()
        for (const g of q.guests) {
          if (!types.some((t) => t.type === g.type)) {
            return yield* new QbConflict({ code: "price_changed", detail: `guest type ${g.type} is not sold on this tour` })
          }
          counts.set(g.type, (counts.get(g.type) ?? 0) + g.count)
        }
        const slot = (yield* slotsFor(tour, q.start.date)).find((s) => s.time === q.start.time)
        if (!slot || slot.soldOut || (slot.seatsLeft !== null && slot.seatsLeft < total)) {
          return yield* new QbConflict({
            code: "sold_out",
            detail: `${q.start.date} ${q.start.time}: ${slot ? `${slot.seatsLeft} seats left for ${total}` : "no such departure"}`
          })
        }
        const guests = []
        for (const [type, count] of counts) {
          const price = slot.guests.find((g) => g.type === type)
          if (!price) return yield* new QbConflict({ code: "price_changed", detail: `no price for ${type} on this departure` })
          guests.push({ type, label: price.label, count, unitMinor: price.unitMinor, lineMinor: price.unitMinor * count })
        }
        const totalMinor = guests.reduce((n, g) => n + g.lineMinor, 0)
        const vatMinor = vatIncluded(totalMinor)
        const cartLine = {
          operatorName: tour.operator_name,
          tourName: tour.title,
          start: { date: q.start.date, time: q.start.time, timeZone: tour.timezone },
          guests,
          totalMinor,
          currency: tour.currency,
          requiresPhone: false,
          orderLineText: orderLineText(tour.title, q.start.date, q.start.time),
          payment: {
            provider: "payprovider" as const,
            merchantId: merchant.merchant_id,
            taxLines: [{ amount: vatMinor, percentage: DESK_VAT_PERCENT, type: "VAT" as const }],
            serviceProviders: Option.match(qbConfig.serviceProviderId, {
              onNone: () => [],
              onSome: (id) => [{ serviceProviderId: id, amount: { percentage: qbConfig.serviceFeePercent } }]
            })
          }
        }
        const validUntil = new Date((yield* Clock.currentTimeMillis) + QUOTE_VALIDITY_MINUTES * 60_000)
        const reference = newReference()
        yield* sql`
          INSERT INTO quickbook_sales (reference, terminal_id, key_id, selling_operator_id, tour_id, merchant_id, product_id,
            rate_id, start_date, start_time, start_time_id, guests, total_minor, vat_minor, currency, cart_line, valid_until)
          VALUES (${reference}, ${terminal.id}, ${key.id}, ${terminal.operatorId}, ${tour.id}, ${merchant.merchant_id},
            ${tour.product_id}, ${slot.rateId}, ${q.start.date}, ${q.start.time}, ${slot.startTimeId},
            ${JSON.stringify(guests.map((g) => ({ ...g, categoryId: types.find((t) => t.type === g.type)!.categoryId })))}::jsonb,
            ${totalMinor}, ${vatMinor}, ${tour.currency}, ${JSON.stringify(cartLine)}::jsonb, ${validUntil})`.pipe(Effect.orDie)
        return { reference, validUntil: validUntil.toISOString(), cartLine }
      }).pipe(Effect.withSpan("QuickbookTours.quote"))

    return { sellable, sellableTour, list, slots, quote } as const
  }),
  dependencies: [BookingSystemAccounts.Default]
}) {}
