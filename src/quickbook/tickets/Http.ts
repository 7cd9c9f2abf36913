/** GET /sales/{reference}, GET /sales/{reference}/ticket and the signed PDF link: decode, ask QuickbookTickets, encode. */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { QuickbookApi } from "../Api.js"
import { clerkLanguage } from "../clerkMessages.js"
import { CurrentTerminal } from "../security.js"
import { QuickbookTickets } from "./QuickbookTickets.js"

export const QuickbookTicketsLive = HttpApiBuilder.group(QuickbookApi, "tickets", (handlers) =>
  Effect.gen(function*() {
    const tickets = yield* QuickbookTickets
    return handlers
      .handle("status", ({ path }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentTerminal
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* tickets.status(caller, path.reference, clerkLanguage(request.headers["accept-language"]))
        }))
      .handle("ticket", ({ path, urlParams }) =>
        Effect.flatMap(CurrentTerminal, (caller) =>
          tickets.ticket(caller, path.reference, urlParams.lang ?? "en")))
  })).pipe(Layer.provide(QuickbookTickets.Default))

export const QuickbookTicketPdfLive = HttpApiBuilder.group(
  QuickbookApi,
  "ticketPdf",
  (handlers) =>
    Effect.gen(function*() {
      const tickets = yield* QuickbookTickets
      return handlers.handle("pdf", ({ path, urlParams }) =>
        Effect.map(
          tickets.pdf(path.file, { lang: urlParams.lang ?? "en", exp: urlParams.exp, sig: urlParams.sig }),
          (bytes) =>
            HttpServerResponse.uint8Array(bytes, {
              contentType: "application/pdf",
              headers: { "Content-Disposition": `inline; filename="${path.file}"` }
            })
        ))
    })
).pipe(Layer.provide(QuickbookTickets.Default))
