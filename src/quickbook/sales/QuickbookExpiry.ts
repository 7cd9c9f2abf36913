/**
 * The Quickbook expiry sweep (src/jobs/quickbookExpiry.ts; docs/decisions.md "Quickbook: expiry
 * sweep"): sales left behind by their clients move on by themselves.
 * - `held` whose hold lapsed: released at the booking system, best-effort (a hold it no longer knows
 *   counts as released; one that does not answer in time is left to the booking system's own
 *   expiry, which the lapsed time already passed), then settled exactly as DELETE /reserve settles a
 *   release: `quoted` while the quote still stands, else `expired`. The hold is released only at an
 *   account the sale's key may use (test keys: sandboxes only; src/quickbook/terminals/testKeys.ts).
 * - `quoted` past `valid_until`: `expired` (POST /book still accepts it and checks the live price).
 * - `booking`, `confirmed` and `failed` are never touched. Each held sale is settled in its own
 *   transaction with its row locked (`SKIP LOCKED`: a reserve, release or book at work on it wins),
 *   and the conditions are checked again under the lock.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Option } from "effect"
import { TourAvailabilityConfig } from "../../catalogue/config.js"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { BookingSystem } from "../../ports/BookingSystem.js"
import { modeMayUse } from "../terminals/testKeys.js"
import { type LapsedSale, QuickbookExpiryRepo } from "./QuickbookExpiryRepo.js"

/** Lapsed holds settled per run at most; the next run takes the rest. */
export const EXPIRY_HOLD_BATCH = 200

export interface ExpirySummary {
  /** Holds that lapsed and were settled. */
  readonly holds_lapsed: number
  /** Of those, released at the booking system (or already gone there). */
  readonly holds_released: number
  /** Of those, left to the booking system's own expiry (no answer, or an account the key may not use). */
  readonly holds_left: number
  readonly quotes_expired: number
}

type ReleaseOutcome = "released" | "left"

export class QuickbookExpiry extends Effect.Service<QuickbookExpiry>()("Quickbook/Expiry", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* QuickbookExpiryRepo
    const accounts = yield* BookingSystemAccounts
    const bookingSystem = yield* BookingSystem
    const config = yield* TourAvailabilityConfig

    /** Best-effort release at the booking system; never fails. */
    const releaseAtBookingSystem = (sale: LapsedSale): Effect.Effect<ReleaseOutcome> => {
      if (sale.account_id === null || sale.account_sandbox === null || !modeMayUse(sale.mode, sale.account_sandbox)) {
        return Effect.as(
          Effect.logWarning(
            `quickbook-expiry: hold ${sale.hold_id} of ${sale.reference} left to lapse: the key may not use its booking system`
          ),
          "left" as const
        )
      }
      const accountId = sale.account_id
      return Effect.flatMap(accounts.byId(accountId), (found) => bookingSystem.releaseHold(found.account, sale.hold_id))
        .pipe(
          Effect.timeoutFail({
            duration: Duration.millis(config.availabilityTimeoutMs),
            onTimeout: () => "no answer in time"
          }),
          Effect.as("released" as const),
          // A hold the booking system no longer knows (lapsed, released) is released.
          Effect.catchTag("BookingSystemRejected", () => Effect.succeed("released" as const)),
          Effect.catchAllCause((cause) =>
            Effect.as(
              Effect.logWarning(
                `quickbook-expiry: hold ${sale.hold_id} of ${sale.reference} not released; the booking system's own expiry will`,
                cause
              ),
              "left" as const
            )
          )
        )
    }

    /** One lapsed hold, under its row lock; None when another call got to it first. */
    const settleHold = (reference: string, now: Date) =>
      sql.withTransaction(Effect.gen(function*() {
        const sale = yield* repo.lockLapsed({ reference, now })
        if (Option.isNone(sale)) return null
        const outcome = yield* releaseAtBookingSystem(sale.value)
        yield* repo.settleLapsed({ reference, now, releasedAt: outcome === "released" ? now : null })
        return outcome
      }))

    const sweep = Effect.fn("QuickbookExpiry.sweep")(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const lapsed = yield* repo.lapsedHolds({ now, limit: EXPIRY_HOLD_BATCH })
      const outcomes = yield* Effect.forEach(
        lapsed,
        ({ reference }) =>
          settleHold(reference, now).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logError(`quickbook-expiry: sale ${reference} not settled; next run`, cause), null)
            )
          ),
        { concurrency: 4 }
      )
      // After the holds: a hold settled as `expired` above is not counted twice.
      const expired = yield* repo.expireQuotes(now)
      return {
        holds_lapsed: outcomes.filter((o) => o !== null).length,
        holds_released: outcomes.filter((o) => o === "released").length,
        holds_left: outcomes.filter((o) => o === "left").length,
        quotes_expired: expired.length
      } satisfies ExpirySummary
    })

    return { sweep } as const
  }),
  dependencies: [BookingSystemAccounts.Default, QuickbookExpiryRepo.Default]
}) {}
