/**
 * GET /sales/{reference}, GET /sales/{reference}/ticket and the signed PDF link: decode, ask
 * QuickbookTickets, encode (the ticket serialised directly, http/json.ts: a hot read, bench:desk).
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { jsonBody } from "../../http/json.js"
import { QuickbookApi } from "../Api.js"
import { clerkLanguage } from "../clerkMessages.js"
import { CurrentTerminal } from "../security.js"
import { TicketSchema } from "./Api.js"
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
          Effect.map(
            tickets.ticket(caller, path.reference, urlParams.lang ?? "en"),
            (ticket) => jsonBody(TicketSchema, ticket)
          )))
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
