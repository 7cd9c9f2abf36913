/**
 * The SQL of booking-system accounts and the operators linked to them (BookingSystemAccounts;
 * `booking_system_accounts`, `operators.booking_system_account_id`, `tours.booking_system_product_id`).
 * Typed with SqlSchema and the row schema below; a database error or a row that does not decode is
 * a defect at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IdRow, repoEdge } from "../db/repoEdge.js"

/** An account with its credentials and the operators linked to it, sorted by name then id. */
export const AccountRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("bokun"),
  name: Schema.String,
  base_url: Schema.String,
  access_key: Schema.String,
  secret_key: Schema.String,
  service_channel_id: Schema.NullOr(Schema.String),
  operators: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, timezone: Schema.String }))
})
export type AccountRow = typeof AccountRow.Type

export const AccountListing = Schema.Struct({
  id: Schema.String,
  kind: Schema.String,
  name: Schema.String,
  base_url: Schema.String,
  sandbox: Schema.Boolean,
  operators: Schema.NullOr(Schema.Array(Schema.String))
})

export class BookingSystemAccountsRepo extends Effect.Service<BookingSystemAccountsRepo>()(
  "Operators/BookingSystemAccountsRepo",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /** Every account with at least one operator linked, or the one with this id. */
      const linked = SqlSchema.findAll({
        Request: Schema.UndefinedOr(Schema.String),
        Result: AccountRow,
        execute: (id) =>
          sql`
            SELECT a.id, a.kind, a.name, a.base_url, a.access_key, a.secret_key, a.service_channel_id,
              json_agg(json_build_object('id', o.id, 'name', o.name, 'timezone', o.timezone) ORDER BY o.name, o.id) AS operators
            FROM booking_system_accounts a
            JOIN operators o ON o.booking_system_account_id = a.id
            ${id === undefined ? sql`` : sql`WHERE a.id = ${id}`}
            GROUP BY a.id
            ORDER BY a.name, a.id`
      })

      const insert = SqlSchema.single({
        Request: Schema.Struct({
          kind: Schema.Literal("bokun"),
          name: Schema.String,
          baseUrl: Schema.String,
          accessKey: Schema.String,
          secretKey: Schema.String,
          serviceChannelId: Schema.NullOr(Schema.String),
          sandbox: Schema.Boolean
        }),
        Result: IdRow,
        execute: (a) =>
          sql`
            INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id, sandbox)
            VALUES (${a.kind}, ${a.name}, ${a.baseUrl}, ${a.accessKey}, ${a.secretKey}, ${a.serviceChannelId}, ${a.sandbox})
            RETURNING id`
      })

      /** None when there is no such account. */
      const setSandbox = SqlSchema.findOne({
        Request: Schema.Struct({ accountId: Schema.String, sandbox: Schema.Boolean }),
        Result: IdRow,
        execute: ({ accountId, sandbox }) =>
          sql`UPDATE booking_system_accounts SET sandbox = ${sandbox} WHERE id::text = ${accountId} RETURNING id`
      })

      /** None when there is no such operator. */
      const linkOperator = SqlSchema.findOne({
        Request: Schema.Struct({ operatorId: Schema.String, accountId: Schema.NullOr(Schema.String) }),
        Result: IdRow,
        execute: ({ accountId, operatorId }) =>
          sql`UPDATE operators SET booking_system_account_id = ${accountId} WHERE id = ${operatorId} RETURNING id`
      })

      /** None when there is no such tour. */
      const mapTour = SqlSchema.findOne({
        Request: Schema.Struct({ tourId: Schema.String, productId: Schema.NullOr(Schema.String) }),
        Result: IdRow,
        execute: ({ productId, tourId }) =>
          sql`
            UPDATE tours SET booking_system_product_id = ${productId}, updated_at = now() WHERE id = ${tourId} RETURNING id`
      })

      /** Every account, linked or not, with its operators' names. */
      const list = SqlSchema.findAll({
        Request: Schema.Void,
        Result: AccountListing,
        execute: () =>
          sql`
            SELECT a.id, a.kind, a.name, a.base_url, a.sandbox,
              array_agg(o.name ORDER BY o.name) FILTER (WHERE o.id IS NOT NULL) AS operators
            FROM booking_system_accounts a
            LEFT JOIN operators o ON o.booking_system_account_id = a.id
            GROUP BY a.id
            ORDER BY a.name, a.id`
      })

      return repoEdge("BookingSystemAccountsRepo", { linked, insert, setSandbox, linkOperator, mapTour, list })
    })
  }
) {}
