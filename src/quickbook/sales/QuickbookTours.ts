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
 * SQL: QuickbookToursRepo.
 */
import { Clock, Duration, Effect, Either, Option } from "effect"
import { TourAvailabilityConfig } from "../../catalogue/config.js"
import { readDepartures } from "../../catalogue/readDepartures.js"
import { localDayAt } from "../../domain/localDay.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { QuickbookConfig } from "../config.js"
import { QbBadRequest, QbConflict, QbForbidden, QbUnavailable } from "../errors.js"
import type { QuickbookCaller } from "../terminals/QuickbookKeys.js"
import { modeMayUse, sandboxMismatch } from "../terminals/testKeys.js"
import { type DeskTourRow, QuickbookToursRepo } from "./QuickbookToursRepo.js"
import {
  BOOKING_LINE_TYPE,
  cartTotal,
  DESK_VAT_PERCENT,
  deskDayProblem,
  guestTypesOf,
  newReference,
  orderLineText,
  partyLinesOf,
  QUOTE_MAX_ENTRIES,
  QUOTE_MAX_GUESTS,
  QUOTE_VALIDITY_MINUTES,
  slotsOf,
  vatIncluded
} from "./rules.js"

export type { DeskTourRow } from "./QuickbookToursRepo.js"

export interface QuoteRequest {
  readonly activityId: string
  readonly start: { readonly date: string; readonly time: string }
  readonly guests: ReadonlyArray<{ readonly type: string; readonly count: number }>
}

const notSellable = (detail: string) => new QbForbidden({ code: "tour_not_sellable_here", detail })

export class QuickbookTours extends Effect.Service<QuickbookTours>()("Quickbook/Tours", {
  effect: Effect.gen(function*() {
    const repo = yield* QuickbookToursRepo
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig
    const qbConfig = yield* QuickbookConfig

    const rows = (operatorId: string, tourId: string | null) => repo.sellableTours({ operatorId, tourId })

    /** The selling operator's merchant at the payment provider, if any. */
    const merchantOf = (operatorId: string) => repo.merchantOf(operatorId)

    /** Why the caller's key may not sell the tour through its accounts (test: sandboxes only; live: never), or null. */
    const mismatchOf = (caller: QuickbookCaller, tour: DeskTourRow, merchant: Option.Option<{ sandbox: boolean }>) =>
      sandboxMismatch(caller.key.mode, {
        bookingSystemSandbox: tour.account_sandbox,
        merchantSandbox: Option.match(merchant, { onNone: () => null, onSome: (m) => m.sandbox })
      })

    /** The tours the caller's terminal may sell with the caller's key. */
    const sellable = Effect.fn("QuickbookTours.sellable")(function*(caller: QuickbookCaller) {
      const [tours, merchant] = yield* Effect.all([
        rows(caller.terminal.operatorId, null),
        merchantOf(caller.terminal.operatorId)
      ])
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
      Effect.map(sellableWithMerchant(caller, tourId), ({ tour }) => tour)
    )

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
        return yield* notSellable(
          `this terminal cannot take card payments: terminal ${caller.terminal.id} has no card terminal`
        )
      }
      return { tour, merchantId: merchant.value.merchant_id, paymentTerminalId: caller.terminal.paymentTerminalId }
    })

    /**
     * The booking-system account a hold of the tour is released at, when the caller's key may use it
     * (a hold is released even if the tour is no longer sold here); None: the key may not touch it.
     */
    const holdAccountOf = Effect.fn("QuickbookTours.holdAccountOf")((caller: QuickbookCaller, tourId: string) =>
      Effect.map(
        repo.accountOfTour(tourId),
        Option.flatMap((r) => (modeMayUse(caller.key.mode, r.sandbox) ? Option.some(r.account_id) : Option.none()))
      )
    )

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
          Effect.mapError((e) =>
            new QbUnavailable({ code: "provider_unavailable", detail: `${e._tag} ${e.reason}: ${e.detail}` })
          )
        )
      })

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /**
     * A day from the request (`param` names it), when a desk may ask about it (`deskDayProblem`):
     * 400 `invalid_request` naming the parameter otherwise, before any booking-system call.
     */
    const checkDeskDay = Effect.fn("QuickbookTours.deskDay")(function*(param: string, day: string) {
      const problem = deskDayProblem(day, yield* now)
      if (problem !== undefined) {
        return yield* new QbBadRequest({ code: "invalid_request", detail: `${param}: ${problem}` })
      }
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
            available: Option.match(slots, {
              onNone: () => null,
              onSome: (s) => s.some((x) => !x.soldOut && x.guests.length > 0)
            })
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
          return yield* new QbConflict({
            code: "price_changed",
            detail: `guest type ${g.type} is not sold on this tour`
          })
        }
        counts.set(g.type, (counts.get(g.type) ?? 0) + g.count)
      }
      const slot = (yield* slotsFor(tour, q.start.date)).find((s) => s.time === q.start.time)
      if (!slot || slot.soldOut || (slot.seatsLeft !== null && slot.seatsLeft < total)) {
        return yield* new QbConflict({
          code: "sold_out",
          detail: `${q.start.date} ${q.start.time}: ${
            slot ? `${slot.seatsLeft} seats left for ${total}` : "no such departure"
          }`
        })
      }
      const lines = partyLinesOf([...counts].map(([type, count]) => ({ type, count })), slot)
      if (Either.isLeft(lines)) {
        return yield* new QbConflict({ code: "price_changed", detail: `no price for ${lines.left} on this departure` })
      }
      // The guest types, then the booking price of a tour priced per booking: the entries add up to the total.
      const guests = lines.right
      const totalMinor = cartTotal(guests)
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
      yield* repo.insertQuote({
        reference,
        terminalId: terminal.id,
        keyId: key.id,
        operatorId: terminal.operatorId,
        tourId: tour.id,
        merchantId,
        productId: tour.product_id,
        rateId: slot.rateId,
        startDate: q.start.date,
        startTime: q.start.time,
        startTimeId: slot.startTimeId,
        // The party as booked (pax): guest types only, never the booking price's entry.
        guests: JSON.stringify(
          guests.filter((g) => g.type !== BOOKING_LINE_TYPE).map((g) => ({
            ...g,
            categoryId: types.find((t) => t.type === g.type)!.categoryId
          }))
        ),
        totalMinor,
        vatMinor,
        currency: tour.currency,
        cartLine: JSON.stringify(cartLine),
        validUntil
      })
      return { reference, validUntil: validUntil.toISOString(), cartLine }
    })

    return { sellable, sellableTour, chargeableTour, holdAccountOf, slotsFor, deskDay, list, slots, quote } as const
  }),
  dependencies: [BookingSystemAccounts.Default, QuickbookToursRepo.Default]
}) {}
