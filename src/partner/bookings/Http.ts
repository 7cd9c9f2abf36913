/** GET /api/v1/bookings and /bookings/{id}: decode (done by HttpApi), read for the key (Bookings), encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { PartnerApi } from "../Api.js"
import { CurrentKey } from "../auth/security.js"
import { BookingDetail, BookingPage } from "./booking.js"
import { Bookings } from "./Bookings.js"

export const BookingsLive = HttpApiBuilder.group(PartnerApi, "bookings", (handlers) =>
  Effect.gen(function*() {
    const bookings = yield* Bookings
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentKey, (key) => bookings.page(key, urlParams)).pipe(
          Effect.map((page) => jsonBody(BookingPage, page))
        ))
      .handle("get", ({ path, urlParams }) =>
        Effect.flatMap(CurrentKey, (key) =>
          bookings.detail(key, path.id, urlParams.partner_id)).pipe(
            Effect.map((detail) => jsonBody(BookingDetail, detail))
          ))
  })).pipe(Layer.provide(Bookings.Default))
