/** Payment-link handler: the write machinery (idempotency, daily limit, audit) around PaymentLinks.send. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { PartnerApi } from "../Api.js"
import { Writes } from "../writes/Writes.js"
import { PaymentLinkResult } from "./Api.js"
import { PaymentLinks } from "./PaymentLinks.js"

export const PaymentLinksLive = HttpApiBuilder.group(PartnerApi, "paymentLinks", (handlers) =>
  Effect.gen(function*() {
    const writes = yield* Writes
    const links = yield* PaymentLinks
    return handlers.handle("paymentLink", ({ path, payload }) =>
      writes.run(
        { action: "payment_links", success: PaymentLinkResult, targetId: path.id, payload },
        (ctx) => links.send(path.id, ctx)
      ))
  })).pipe(
    Layer.provide([PaymentLinks.Default.pipe(Layer.provide(BookingSystemAccounts.Default)), Writes.Default])
  )
