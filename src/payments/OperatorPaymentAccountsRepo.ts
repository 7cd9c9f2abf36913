/**
 * The SQL of operators' merchants at the payment provider (OperatorPaymentAccounts;
 * `operator_payment_accounts`, migration 0009). Typed with SqlSchema and the row schemas below; a
 * database error or a row that does not decode is a defect at its edge (repoEdge: a span per
 * method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

/** The operator's merchant with its own base URL and credentials, when it has them (a sandbox merchant). */
export const MerchantRow = Schema.Struct({
  merchant_id: Schema.String,
  payment_page_terminal_id: Schema.NullOr(Schema.String),
  base_url: Schema.NullOr(Schema.String),
  api_key: Schema.NullOr(Schema.String),
  api_secret: Schema.NullOr(Schema.String)
})

export const MerchantListing = Schema.Struct({
  operator_id: Schema.String,
  operator_name: Schema.String,
  merchant_id: Schema.String,
  payment_page_terminal_id: Schema.NullOr(Schema.String),
  base_url: Schema.NullOr(Schema.String),
  sandbox: Schema.Boolean
})

export class OperatorPaymentAccountsRepo extends Effect.Service<OperatorPaymentAccountsRepo>()(
  "Payments/OperatorPaymentAccountsRepo",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const merchantOf = SqlSchema.findOne({
        Request: Schema.String,
        Result: MerchantRow,
        execute: (operatorId) =>
          sql`
            SELECT merchant_id, payment_page_terminal_id, base_url, api_key, api_secret
            FROM operator_payment_accounts WHERE operator_id = ${operatorId}`
      })

      const operatorExists = SqlSchema.single({
        Request: Schema.String,
        Result: Schema.Struct({ found: Schema.Boolean }),
        execute: (operatorId) => sql`SELECT EXISTS (SELECT 1 FROM operators WHERE id = ${operatorId}) AS found`
      })

      /** Records (or replaces) the operator's merchant. */
      const upsert = SqlSchema.void({
        Request: Schema.Struct({
          operatorId: Schema.String,
          merchantId: Schema.String,
          paymentPageTerminalId: Schema.NullOr(Schema.String),
          baseUrl: Schema.NullOr(Schema.String),
          apiKey: Schema.NullOr(Schema.String),
          apiSecret: Schema.NullOr(Schema.String),
          sandbox: Schema.Boolean
        }),
        execute: (a) =>
          sql`
            INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, base_url, api_key, api_secret, sandbox)
            VALUES (${a.operatorId}, ${a.merchantId}, ${a.paymentPageTerminalId}, ${a.baseUrl}, ${a.apiKey}, ${a.apiSecret}, ${a.sandbox})
            ON CONFLICT (operator_id) DO UPDATE SET merchant_id = excluded.merchant_id,
              payment_page_terminal_id = excluded.payment_page_terminal_id, base_url = excluded.base_url,
              api_key = excluded.api_key, api_secret = excluded.api_secret, sandbox = excluded.sandbox, updated_at = now()`
      })

      /** Every operator's merchant (no credentials). */
      const list = SqlSchema.findAll({
        Request: Schema.Void,
        Result: MerchantListing,
        execute: () =>
          sql`
            SELECT a.operator_id, o.name AS operator_name, a.merchant_id, a.payment_page_terminal_id, a.base_url, a.sandbox
            FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
            ORDER BY o.name, a.operator_id`
      })

      return repoEdge("OperatorPaymentAccountsRepo", { merchantOf, operatorExists, upsert, list })
    })
  }
) {}
