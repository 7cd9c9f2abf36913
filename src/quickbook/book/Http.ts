/** POST /book: decode, ask QuickbookBook, encode. */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { QuickbookApi } from "../Api.js"
import { clerkLanguage } from "../clerkMessages.js"
import { CurrentTerminal } from "../security.js"
import { QuickbookBook } from "./QuickbookBook.js"

export const QuickbookBookLive = HttpApiBuilder.group(
  QuickbookApi,
  "book",
  (handlers) =>
    Effect.map(QuickbookBook, (book) =>
      handlers.handle("book", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* CurrentTerminal
          const request = yield* HttpServerRequest.HttpServerRequest
          return yield* book.book(caller, payload, clerkLanguage(request.headers["accept-language"]))
        })))
).pipe(Layer.provide(QuickbookBook.Default))
