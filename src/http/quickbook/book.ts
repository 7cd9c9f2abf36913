/** POST /book: decode, ask QuickbookBook, encode. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { QuickbookBook } from "../../services/QuickbookBook.js"
import { QuickbookApi } from "./Api.js"
import { CurrentTerminal } from "./security.js"

export const QuickbookBookLive = HttpApiBuilder.group(QuickbookApi, "book", (handlers) =>
  Effect.map(QuickbookBook, (book) =>
    handlers.handle("book", ({ payload }) => Effect.flatMap(CurrentTerminal, (caller) => book.book(caller, payload)))))
