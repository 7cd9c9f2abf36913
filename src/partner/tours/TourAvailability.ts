/**
 * GET /tours/{id}/availability (spec §2 "Availability", §4, §8): a visible tour's days (and, for up
 * to 14 days, its departures) read live from its booking system: one availability read per chunk of
 * 31 days, within `TOUR_AVAILABILITY_TIMEOUT_MS`. Never reserves anything. A booking system that does
 * not answer in time (or refuses), or a tour without a booking-system link, answers `known: false`
 * with every day `available: true` and no price: never a 5xx, never "sold out". Rules: src/catalogue/availability.ts.
 */
import { Clock, Duration, Effect } from "effect"
import {
  type AvailabilityQuery,
  knownDays,
  type TourAvailability as TourAvailabilityBody,
  unknownDays
} from "../../catalogue/availability.js"
import { TourAvailabilityConfig } from "../../catalogue/config.js"
import { readDepartures } from "../../catalogue/readDepartures.js"
import { annotateSpan } from "../../observability/spanFn.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { type CatalogueView, Tours } from "./Tours.js"

export class TourAvailability extends Effect.Service<TourAvailability>()("Partner/TourAvailability", {
  effect: Effect.gen(function*() {
    const tours = yield* Tours
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig

    const read = Effect.fn("TourAvailability.read")(function*(
      id: string,
      view: Pick<CatalogueView, "siteIds">,
      q: AvailabilityQuery
    ) {
      yield* annotateSpan({ tour_id: id, ...q })
      const link = yield* tours.bookingLink(id, view)
      const head = {
        tour_id: link.id,
        timezone: link.timezone,
        currency: link.currency,
        from: q.from,
        to: q.to,
        pax: q.pax
      }
      const unknown = (why: string) =>
        Effect.as(
          Effect.logInfo(`availability of tour ${link.id} not known: ${why}`),
          { ...head, ...unknownDays(q) } satisfies TourAvailabilityBody
        )
      if (link.productId === null || link.accountId === null) return yield* unknown("not linked to a booking system")
      const found = yield* Effect.either(accounts.byId(link.accountId))
      if (found._tag === "Left") return yield* unknown(found.left.message)
      const departures = yield* Effect.either(
        readDepartures(
          bookingSystem,
          found.right.account,
          { productId: link.productId, from: q.from, to: q.to },
          Duration.millis(config.availabilityTimeoutMs)
        )
      )
      if (departures._tag === "Left") {
        const e = departures.left
        return yield* unknown(`${e._tag} ${e.reason}: ${e.detail}`)
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      return {
        ...head,
        ...knownDays(departures.right, q, {
          timeZone: link.timezone,
          currency: link.currency,
          defaultCategoryId: link.defaultCategoryId,
          now
        })
      } satisfies TourAvailabilityBody
    })

    return { read } as const
  }),
  dependencies: [Tours.Default, BookingSystemAccounts.Default]
}) {}
