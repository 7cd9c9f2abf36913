/**
 * Booking-system accounts and the operators linked to them. Several operators may share one
 * account; the mirror reads it once. Credentials are handed out only as `Redacted` values.
 */
import { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Data, Effect, Redacted } from "effect"
import type { AdapterKind, BookingSystemAccount } from "../ports/BookingSystem.js"

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

interface AccountRow {
  readonly id: string
  readonly kind: AdapterKind
  readonly name: string
  readonly base_url: string
  readonly access_key: string
  readonly secret_key: string
  readonly service_channel_id: string | null
  readonly operators: Array<LinkedOperator>
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
    const sql = yield* SqlClient.SqlClient

    const select = (where: Fragment) =>
      sql<AccountRow>`
        SELECT a.id, a.kind, a.name, a.base_url, a.access_key, a.secret_key, a.service_channel_id,
          json_agg(json_build_object('id', o.id, 'name', o.name, 'timezone', o.timezone) ORDER BY o.name, o.id) AS operators
        FROM booking_system_accounts a
        JOIN operators o ON o.booking_system_account_id = a.id
        ${where}
        GROUP BY a.id
        ORDER BY a.name, a.id`.pipe(Effect.orDie, Effect.map((rows) => rows.map(toMirrored)))

    /** Every account with at least one operator linked (an account nobody uses is not mirrored). */
    const mirrored = Effect.fn("BookingSystemAccounts.mirrored")(() => select(sql``))

    const byId = Effect.fn("BookingSystemAccounts.byId")((id: string) =>
      select(sql`WHERE a.id = ${id}`).pipe(
        Effect.flatMap((rows) =>
          rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new AccountError({ message: `account ${id} not found or has no operator linked` }))
        )
      ))

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
      sql<{ id: string }>`
        INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id, sandbox)
        VALUES (${a.kind}, ${a.name}, ${a.baseUrl.replace(/\/+$/, "")}, ${a.accessKey}, ${a.secretKey}, ${a.serviceChannelId ?? null},
          ${a.sandbox ?? false})
        RETURNING id`.pipe(Effect.map((r) => r[0]!.id)))

    /** Marks an account a sandbox, or live. */
    const setSandbox = Effect.fn("BookingSystemAccounts.setSandbox")((accountId: string, sandbox: boolean) =>
      sql<{ id: string }>`
        UPDATE booking_system_accounts SET sandbox = ${sandbox} WHERE id::text = ${accountId} RETURNING id`.pipe(
        Effect.flatMap((r) => r.length === 1 ? Effect.void : Effect.fail(new AccountError({ message: `account ${accountId} not found` })))
      ))

    /** Links an operator to an account (or unlinks it with null). */
    const link = Effect.fn("BookingSystemAccounts.link")((operatorId: string, accountId: string | null) =>
      sql<{ id: string }>`
        UPDATE operators SET booking_system_account_id = ${accountId} WHERE id = ${operatorId} RETURNING id`.pipe(
        Effect.flatMap((r) => r.length === 1 ? Effect.void : Effect.fail(new AccountError({ message: `operator ${operatorId} not found` })))
      ))

    /** Says which booking-system product a tour is. */
    const mapTour = Effect.fn("BookingSystemAccounts.mapTour")((tourId: string, productId: string | null) =>
      sql<{ id: string }>`
        UPDATE tours SET booking_system_product_id = ${productId}, updated_at = now() WHERE id = ${tourId} RETURNING id`.pipe(
        Effect.flatMap((r) => r.length === 1 ? Effect.void : Effect.fail(new AccountError({ message: `tour ${tourId} not found` })))
      ))

    const list = Effect.fn("BookingSystemAccounts.list")(() =>
      sql<{ id: string; kind: string; name: string; base_url: string; sandbox: boolean; operators: Array<string> | null }>`
        SELECT a.id, a.kind, a.name, a.base_url, a.sandbox,
          array_agg(o.name ORDER BY o.name) FILTER (WHERE o.id IS NOT NULL) AS operators
        FROM booking_system_accounts a
        LEFT JOIN operators o ON o.booking_system_account_id = a.id
        GROUP BY a.id
        ORDER BY a.name, a.id`)

    return { mirrored, byId, create, setSandbox, link, mapTour, list } as const
  })
}) {}
