/**
 * The Bókun adapter's catalogue reads (read-only, retried): a product's departures
 * (`GET /activity.json/{id}/availabilities`) and every product of the account (the activity search,
 * then each activity and its pickup places, `catalogueConcurrency` at a time).
 */
import { Effect } from "effect"
import type { BookingSystemAccount, BookingSystemClient } from "../../ports/BookingSystem.js"
import type { BokunHttp } from "./client.js"
import * as Dialect from "./dialect.js"
import { departures, productOf } from "./mapping.js"

export interface CatalogueOptions {
  /** Parallel product detail requests when reading the catalogue. */
  readonly catalogueConcurrency: number
}

const enc = encodeURIComponent

export const makeCatalogueReads = (http: BokunHttp, options: CatalogueOptions) => {
  const listActivities = (account: BookingSystemAccount) =>
    Effect.gen(function*() {
      const ids: Array<string> = []
      for (let page = 1;; page++) {
        const result = yield* http.request(account, {
          operation: "activitySearch",
          method: "POST",
          route: "/activity.json/search",
          path: "/activity.json/search",
          body: { page, pageSize: 100 },
          safe: true
        }, Dialect.ActivitySearchResult)
        ids.push(...result.items.map((a) => String(a.id)))
        if (result.items.length === 0 || ids.length >= result.totalHits) return ids
      }
    })

  const product = (account: BookingSystemAccount, id: string) =>
    Effect.zipWith(
      http.request(account, {
        operation: "activity",
        method: "GET",
        route: "/activity.json/{id}",
        path: `/activity.json/${enc(id)}`,
        safe: true
      }, Dialect.Activity),
      http.request(account, {
        operation: "pickupPlaces",
        method: "GET",
        route: "/activity.json/{id}/pickup-places",
        path: `/activity.json/${enc(id)}/pickup-places`,
        safe: true
      }, Dialect.PickupPlaces),
      productOf
    )

  const availability = (
    account: BookingSystemAccount,
    query: Parameters<BookingSystemClient["availability"]>[1]
  ) =>
    http.request(account, {
      operation: "availabilities",
      method: "GET",
      route: "/activity.json/{id}/availabilities",
      path: `/activity.json/${enc(query.productId)}/availabilities?start=${enc(query.from)}&end=${
        enc(query.to)
      }&includeSoldOut=true`,
      safe: true
    }, Dialect.Availabilities).pipe(Effect.map(departures))

  const products = (account: BookingSystemAccount) =>
    listActivities(account).pipe(
      Effect.flatMap((ids) =>
        Effect.forEach(ids, (id) => product(account, id), { concurrency: options.catalogueConcurrency })
      )
    )

  return { availability, products }
}
