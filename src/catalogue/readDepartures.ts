/**
 * A product's departures over a range, read through the BookingSystem port in chunks of at most
 * `CHUNK_DAYS` days (three at a time), the whole read within a deadline. Only availability reads:
 * nothing is held or reserved. Used by live availability and the season job.
 */
import { Duration, Effect } from "effect"
import {
  type BookingSystemAccount,
  type BookingSystemClient,
  type BookingSystemError,
  BookingSystemUnavailable,
  type DepartureAvailability
} from "../ports/BookingSystem.js"
import { chunksOf } from "./availability.js"

/** Chunks of one read asked at the same time. */
export const CHUNK_CONCURRENCY = 3

export const readDepartures = (
  bookingSystem: BookingSystemClient,
  account: BookingSystemAccount,
  query: { readonly productId: string; readonly from: string; readonly to: string },
  deadline: Duration.DurationInput
): Effect.Effect<ReadonlyArray<DepartureAvailability>, BookingSystemError> => {
  const chunks = chunksOf(query.from, query.to)
  const read = (chunk: { readonly from: string; readonly to: string }) =>
    bookingSystem.availability(account, { productId: query.productId, from: chunk.from, to: chunk.to })
  // One chunk (a desk's day, a short range) is read as it is: no fiber per chunk (bench:desk reads one day per request).
  const all = chunks.length === 1
    ? read(chunks[0]!)
    : Effect.map(Effect.forEach(chunks, read, { concurrency: CHUNK_CONCURRENCY }), (parts) => parts.flat())
  return all.pipe(
    // Interruptible even inside a request, which runs uninterruptibly (src/http/apiApp.ts): the deadline must be
    // able to cut a booking system that hangs. Only HTTP calls run in here, no SQL.
    Effect.interruptible,
    Effect.timeoutFail({
      duration: deadline,
      onTimeout: () =>
        new BookingSystemUnavailable({
          accountId: account.id,
          operation: "availability",
          reason: "timeout",
          detail: `no answer within ${Duration.format(Duration.decode(deadline))}`
        })
    }),
    Effect.withSpan("readDepartures", {
      attributes: { "bokun.account_id": account.id, product_id: query.productId, ...query, chunks: chunks.length }
    })
  )
}
