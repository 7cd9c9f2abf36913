/**
 * What a desk terminal can sell (Quickbook spec §4; issue 6 items 4-5): the published tours, linked
 * to a booking system, on the sites its selling operator owns, whether the operator's own or resold
 * by it (`site_tours.sold_by = 'site_owner'`); their slots of a day read live through the
 * BookingSystem port within a deadline (`TOUR_AVAILABILITY_TIMEOUT_MS`); and quotes, stored in
 * `quickbook_sales` (nothing is held). Rules: src/quickbook/sales/rules.ts.
 *
 * Sellability is decided here, in one place, for every step of a sale (tours, slots, quote, reserve,
 * book): the tour is sold on the operator's sites (above), and the key's mode matches the accounts
 * the sale touches (a test key only sandbox accounts, a live key only live ones;
 * src/quickbook/terminals/testKeys.ts). Charging (quote, reserve, book) also needs the operator's merchant
 * and the terminal's card terminal (`chargeableTour`). Refusals are 403 `tour_not_sellable_here`.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { QuickbookConfig, TourAvailabilityConfig } from "../../config.js"
import { localDayAt } from "../../domain/localDay.js"
import { QbBadRequest, QbConflict, QbForbidden, QbUnavailable } from "../errors.js"
import {
  type Category,
  deskDayProblem,
  DESK_VAT_PERCENT,
  guestTypesOf,
  newReference,
  orderLineText,
  QUOTE_MAX_ENTRIES,
  QUOTE_MAX_GUESTS,
  QUOTE_VALIDITY_MINUTES,
  slotsOf,
  vatIncluded
} from "./rules.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { modeMayUse, sandboxMismatch } from "../terminals/testKeys.js"
import type { QuickbookCaller } from "../terminals/QuickbookKeys.js"
import { readDepartures } from "../../catalogue/readDepartures.js"

export interface DeskTourRow {
  readonly id: string
  readonly title: string
  readonly operator_name: string
  readonly timezone: string
  readonly currency: string
  readonly duration_minutes: number | null
  readonly departure_times: Array<string>
  /** The operator needs the guest's phone number for this tour (POST /book refuses without one). */
  readonly requires_phone: boolean
  readonly product_id: string
  readonly account_id: string
  /** The booking-system account is a sandbox (migration 0018). */
  readonly account_sandbox: boolean
  readonly categories: Array<Category>
  readonly rate_ids: Array<string>
}

export interface QuoteRequest {
  readonly activityId: string
  readonly start: { readonly date: string; readonly time: string }
  readonly guests: ReadonlyArray<{ readonly type: string; readonly count: number }>
}

const notSellable = (detail: string) => new QbForbidden({ code: "tour_not_sellable_here", detail })

export class QuickbookTours extends Effect.Service<QuickbookTours>()("Quickbook/Tours", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig
    const qbConfig = yield* QuickbookConfig

    const rows = (operatorId: string, tourId: string | null) =>
      sql<DeskTourRow>`
        SELECT t.id, t.title, o.name AS operator_name, t.timezone, t.currency, t.duration_minutes, t.departure_times, t.requires_phone,
          t.booking_system_product_id AS product_id, o.booking_system_account_id AS account_id, a.sandbox AS account_sandbox,
          COALESCE((SELECT json_agg(json_build_object('id', pc.id, 'title', pc.title, 'isDefault', pc.is_default,
              'minAge', pc.min_age, 'maxAge', pc.max_age) ORDER BY pc.position, pc.id)
            FROM tour_pricing_categories pc WHERE pc.tour_id = t.id), '[]'::json) AS categories,
          COALESCE((SELECT array_agg(r.id ORDER BY r.position, r.id) FROM tour_rates r WHERE r.tour_id = t.id), '{}') AS rate_ids
        FROM tours t JOIN operators o ON o.id = t.operator_id JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
        WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL
          AND ${tourId === null ? sql`true` : sql`t.id = ${tourId}`}
          AND EXISTS (
            SELECT 1 FROM site_tours st JOIN sites s ON s.id = st.site_id
            WHERE st.tour_id = t.id AND s.owner_operator_id = ${operatorId}
              AND (t.operator_id = ${operatorId} OR st.sold_by = 'site_owner'))
        ORDER BY t.title, t.id`.pipe(Effect.orDie)

    /** The selling operator's merchant at the payment provider, if any. */
    const merchantOf = (operatorId: string) =>
      Effect.map(
        sql<{ merchant_id: string; sandbox: boolean }>`
          SELECT merchant_id, sandbox FROM operator_payment_accounts WHERE operator_id = ${operatorId}`.pipe(Effect.orDie),
        ([row]) => Option.fromNullable(row)
      )

    /** Why the caller's key may not sell the tour through its accounts (test: sandboxes only; live: never), or null. */
    const mismatchOf = (caller: QuickbookCaller, tour: DeskTourRow, merchant: Option.Option<{ sandbox: boolean }>) =>
      sandboxMismatch(caller.key.mode, {
        bookingSystemSandbox: tour.account_sandbox,
        merchantSandbox: Option.match(merchant, { onNone: () => null, onSome: (m) => m.sandbox })
      })

    /** The tours the caller's terminal may sell with the caller's key. */
    const sellable = Effect.fn("QuickbookTours.sellable")(function*(caller: QuickbookCaller) {
      const [tours, merchant] = yield* Effect.all([rows(caller.terminal.operatorId, null), merchantOf(caller.terminal.operatorId)])
      return tours.filter((tour) => mismatchOf(caller, tour, merchant) === null)
    })

    const sellableWithMerchant = (caller: QuickbookCaller, tourId: string) =>
      Effect.gen(function*() {
        const operatorId = caller.terminal.operatorId
        const [[tour], merchant] = yield* Effect.all([rows(operatorId, tourId), merchantOf(operatorId)])
        if (!tour) return yield* notSellable(`tour ${tourId} is not sold by operator ${operatorId}`)
        const mismatch = mismatchOf(caller, tour, merchant)
        if (mismatch !== null) return yield* notSellable(`tour ${tourId}: ${mismatch}`)
        return { tour, merchant }
      })

    /** The tour, when the caller may sell it (403 `tour_not_sellable_here` otherwise): every step of a sale checks this. */
    const sellableTour = Effect.fn("QuickbookTours.sellableTour")((caller: QuickbookCaller, tourId: string) =>
      Effect.map(sellableWithMerchant(caller, tourId), ({ tour }) => tour))

    /**
     * The tour with what charging for it needs (quote, reserve, book): the selling operator's merchant
     * and the terminal's card terminal; 403 `tour_not_sellable_here` when either is missing.
     */
    const chargeableTour = Effect.fn("QuickbookTours.chargeableTour")(function*(
      caller: QuickbookCaller,
      tourId: string
    ) {
      const { merchant, tour } = yield* sellableWithMerchant(caller, tourId)
      if (Option.isNone(merchant)) {
        return yield* notSellable(`operator ${caller.terminal.operatorId} has no merchant at the payment provider`)
      }
      if (caller.terminal.paymentTerminalId === null) {
        return yield* notSellable(`this terminal cannot take card payments: terminal ${caller.terminal.id} has no card terminal`)
      }
      return { tour, merchantId: merchant.value.merchant_id, paymentTerminalId: caller.terminal.paymentTerminalId }
    })

    /**
     * The booking-system account a hold of the tour is released at, when the caller's key may use it
     * (a hold is released even if the tour is no longer sold here); None: the key may not touch it.
     */
    const holdAccountOf = Effect.fn("QuickbookTours.holdAccountOf")((caller: QuickbookCaller, tourId: string) =>
      Effect.map(
        sql<{ account_id: string; sandbox: boolean }>`
          SELECT a.id AS account_id, a.sandbox FROM tours t JOIN operators o ON o.id = t.operator_id
            JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
          WHERE t.id = ${tourId}`.pipe(Effect.orDie),
        ([row]) => Option.fromNullable(row).pipe(
          Option.filter((r) => modeMayUse(caller.key.mode, r.sandbox)),
          Option.map((r) => r.account_id)
        )
      ))

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

    /**
     * A day from the request (`param` names it), when a desk may ask about it (`deskDayProblem`):
     * 400 `invalid_request` naming the parameter otherwise, before any booking-system call.
     */
    const checkDeskDay = Effect.fn("QuickbookTours.deskDay")(function*(param: string, day: string) {
      const problem = deskDayProblem(day, yield* now)
      if (problem !== undefined) return yield* new QbBadRequest({ code: "invalid_request", detail: `${param}: ${problem}` })
    })
    const deskDay = <D extends string | undefined>(param: string, day: D): Effect.Effect<D, QbBadRequest> =>
      day === undefined ? Effect.succeed(day) : Effect.as(checkDeskDay(param, day), day)

    const slotsFor = Effect.fn("QuickbookTours.slotsFor")(function*(tour: DeskTourRow, date: string) {
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
    const list = Effect.fn("QuickbookTours.list")(function*(caller: QuickbookCaller, date: string | undefined) {
      const tours = yield* sellable(caller)
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
    })

    const slots = Effect.fn("QuickbookTours.slots")(function*(
      caller: QuickbookCaller,
      tourId: string,
      date: string | undefined
    ) {
      const tour = yield* sellableTour(caller, tourId)
      const day = date ?? localDayAt(tour.timezone, yield* now)
      return { tour, date: day, slots: yield* slotsFor(tour, day) }
    })

    const quote = Effect.fn("QuickbookTours.quote")(function*(caller: QuickbookCaller, q: QuoteRequest) {
      const { terminal, key } = caller
      if (q.guests.length > QUOTE_MAX_ENTRIES) {
        return yield* new QbBadRequest({
          code: "invalid_request",
          detail: `at most ${QUOTE_MAX_ENTRIES} guest entries`,
          field: "guests",
          variant: "too_many_guest_entries"
        })
      }
      const total = q.guests.reduce((n, g) => n + g.count, 0)
      if (total > QUOTE_MAX_GUESTS) {
        return yield* new QbBadRequest({
          code: "invalid_request",
          detail: `at most ${QUOTE_MAX_GUESTS} guests in all`,
          field: "guests",
          variant: "too_many_guests"
        })
      }
      yield* deskDay("start.date", q.start.date)
      const { merchantId, tour } = yield* chargeableTour(caller, q.activityId)
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
        requiresPhone: tour.requires_phone,
        orderLineText: orderLineText(tour.title, q.start.date, q.start.time),
        payment: {
          provider: "payprovider" as const,
          merchantId,
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
        VALUES (${reference}, ${terminal.id}, ${key.id}, ${terminal.operatorId}, ${tour.id}, ${merchantId},
          ${tour.product_id}, ${slot.rateId}, ${q.start.date}, ${q.start.time}, ${slot.startTimeId},
          ${JSON.stringify(guests.map((g) => ({ ...g, categoryId: types.find((t) => t.type === g.type)!.categoryId })))}::jsonb,
          ${totalMinor}, ${vatMinor}, ${tour.currency}, ${JSON.stringify(cartLine)}::jsonb, ${validUntil})`.pipe(Effect.orDie)
      return { reference, validUntil: validUntil.toISOString(), cartLine }
    })

    return { sellable, sellableTour, chargeableTour, holdAccountOf, slotsFor, deskDay, list, slots, quote } as const
  }),
  dependencies: [BookingSystemAccounts.Default]
}) {}
