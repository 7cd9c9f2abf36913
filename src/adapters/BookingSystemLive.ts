/**
 * The BookingSystem port's implementation: one adapter per kind of booking system, picked by the
 * account each call names (only Bókun today). Needs an HttpClient (e.g. NodeHttpClient.layer).
 */
import { Effect, Layer } from "effect"
import {
  type AdapterKind,
  BookingSystem,
  type BookingSystemAccount,
  type BookingSystemClient
} from "../ports/BookingSystem.js"
import { type BokunAdapterOptions, defaultAdapterOptions, makeBokunAdapter } from "./bokun/adapter.js"
import { BookingSystemConfig } from "./config.js"

export type BookingSystemOptions = Partial<BokunAdapterOptions>

/** Routes every call to the adapter of the account's kind. */
const dispatch = (adapters: Record<AdapterKind, BookingSystemClient>): BookingSystemClient => {
  const of = (account: BookingSystemAccount) => adapters[account.kind]
  return {
    bookingLines: (account, range) => of(account).bookingLines(account, range),
    createdBookingLines: (account, query) => of(account).createdBookingLines(account, query),
    booking: (account, reference) => of(account).booking(account, reference),
    availability: (account, query) => of(account).availability(account, query),
    products: (account) => of(account).products(account),
    hold: (account, request) => of(account).hold(account, request),
    releaseHold: (account, holdId) => of(account).releaseHold(account, holdId),
    book: (account, request) => of(account).book(account, request),
    cancel: (account, reference, note) => of(account).cancel(account, reference, note),
    move: (account, request) => of(account).move(account, request),
    balance: (account, reference) => of(account).balance(account, reference)
  }
}

/** The port with explicit options (tests: short timeouts and backoff). */
export const bookingSystemLayer = (options: BookingSystemOptions = {}) =>
  Layer.effect(
    BookingSystem,
    Effect.map(makeBokunAdapter({ ...defaultAdapterOptions, ...options }), (bokun) => dispatch({ bokun }))
  )

/** The port configured from BOKUN_TIMEOUT_MS, BOKUN_RETRIES and BOKUN_SEARCH_PAGE_SIZE. */
export const BookingSystemLive = Layer.unwrapEffect(
  Effect.map(BookingSystemConfig, (config) =>
    bookingSystemLayer({
      timeout: `${config.timeoutMs} millis`,
      retries: config.retries,
      searchPageSize: config.searchPageSize
    }))
)
