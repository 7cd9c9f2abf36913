/**
 * The sandbox's booking system: its data in PostgreSQL (schema bokun_sandbox) and the rules the
 * Bókun API applies to it, composed from the catalogue, seats, booking queries and booking changes.
 * Every write bumps a generation counter, which invalidates the snapshots of booking searches.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Ref } from "effect"
import { makeBookingChanges } from "./bookingChanges.js"
import { makeBookingQueries } from "./bookingQueries.js"
import { makeCatalogue } from "./catalogue.js"
import { makeSeats } from "./seats.js"

export type { VendorRow } from "./catalogue.js"
export type { NewBooking, SeatSelection } from "./seats.js"

export const makeStore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const generation = yield* Ref.make(0)
  const changed = Ref.update(generation, (n) => n + 1)
  const catalogue = makeCatalogue(sql)
  const seats = makeSeats(sql, changed, catalogue)
  return {
    sql,
    changed,
    ...catalogue,
    ...seats,
    ...makeBookingQueries(sql, generation, catalogue, seats),
    ...makeBookingChanges(sql, changed, seats)
  }
})

export type Store = Effect.Effect.Success<typeof makeStore>
