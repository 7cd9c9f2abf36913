/**
 * Booking-system accounts and the operators linked to them. Several operators may share one
 * account; the mirror reads it once. Credentials are handed out only as `Redacted` values. SQL:
 * BookingSystemAccountsRepo.
 */
import { Data, Effect, Option, Redacted } from "effect"
import type { AdapterKind, BookingSystemAccount } from "../ports/BookingSystem.js"
import { type AccountRow, BookingSystemAccountsRepo } from "./BookingSystemAccountsRepo.js"

export class AccountError extends Data.TaggedError("AccountError")<{ readonly message: string }> {}

export interface LinkedOperator {
  readonly id: string
  readonly name: string
  readonly timezone: string
}

/** An account with the operators linked to it, sorted by name then id (the first one is the primary). */
export interface MirroredAccount {
  readonly account: BookingSystemAccount
  readonly operators: ReadonlyArray<LinkedOperator>
}

const toMirrored = (row: AccountRow): MirroredAccount => ({
  account: {
    id: row.id,
    kind: row.kind,
    name: row.name,
    baseUrl: row.base_url,
    accessKey: Redacted.make(row.access_key),
    secretKey: Redacted.make(row.secret_key),
    serviceChannelId: row.service_channel_id
  },
  operators: row.operators
})

export class BookingSystemAccounts extends Effect.Service<BookingSystemAccounts>()("Operators/BookingSystemAccounts", {
  effect: Effect.gen(function*() {
    const repo = yield* BookingSystemAccountsRepo

    const ok = (row: Option.Option<unknown>, what: string) =>
      Option.isSome(row) ? Effect.void : Effect.fail(new AccountError({ message: `${what} not found` }))

    /** Every account with at least one operator linked (an account nobody uses is not mirrored). */
    const mirrored = Effect.fn("BookingSystemAccounts.mirrored")(() =>
      Effect.map(repo.linked(undefined), (rows) => rows.map(toMirrored))
    )

    const byId = Effect.fn("BookingSystemAccounts.byId")(function*(id: string) {
      const [row] = yield* repo.linked(id)
      if (row === undefined) {
        return yield* new AccountError({ message: `account ${id} not found or has no operator linked` })
      }
      return toMirrored(row)
    })

    const create = Effect.fn("BookingSystemAccounts.create")((a: {
      kind: AdapterKind
      name: string
      baseUrl: string
      accessKey: string
      secretKey: string
      serviceChannelId?: string | null
      /** A sandbox booking system: Quickbook test keys sell only through sandboxes, live keys never. */
      sandbox?: boolean
    }) =>
      Effect.map(
        repo.insert({
          kind: a.kind,
          name: a.name,
          baseUrl: a.baseUrl.replace(/\/+$/, ""),
          accessKey: a.accessKey,
          secretKey: a.secretKey,
          serviceChannelId: a.serviceChannelId ?? null,
          sandbox: a.sandbox ?? false
        }),
        (row) => row.id
      )
    )

    /** Marks an account a sandbox, or live. */
    const setSandbox = Effect.fn("BookingSystemAccounts.setSandbox")(function*(accountId: string, sandbox: boolean) {
      yield* ok(yield* repo.setSandbox({ accountId, sandbox }), `account ${accountId}`)
    })

    /** Links an operator to an account (or unlinks it with null). */
    const link = Effect.fn("BookingSystemAccounts.link")(function*(operatorId: string, accountId: string | null) {
      yield* ok(yield* repo.linkOperator({ operatorId, accountId }), `operator ${operatorId}`)
    })

    /** Says which booking-system product a tour is. */
    const mapTour = Effect.fn("BookingSystemAccounts.mapTour")(function*(tourId: string, productId: string | null) {
      yield* ok(yield* repo.mapTour({ tourId, productId }), `tour ${tourId}`)
    })

    const list = Effect.fn("BookingSystemAccounts.list")(() => repo.list())

    return { mirrored, byId, create, setSandbox, link, mapTour, list } as const
  }),
  dependencies: [BookingSystemAccountsRepo.Default]
}) {}
