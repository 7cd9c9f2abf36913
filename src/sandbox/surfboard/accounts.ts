/** The payment sandbox's partners, their merchants and the merchants' terminals (store.ts). */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SandboxClock } from "./clock.js"
import { badRequest, notFound } from "./failure.js"
import { type MerchantRow, newId, newSecret, type PartnerRow, type TerminalRow } from "./rows.js"

export const makeAccounts = (clock: SandboxClock) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = clock.now

    const createPartner = (name: string) =>
      Effect.gen(function*() {
        const row: PartnerRow & { created_at: Date } = {
          id: newId("partner"),
          name,
          api_key: newSecret("sbx_key"),
          api_secret: newSecret("sbx_secret"),
          created_at: yield* now
        }
        yield* sql`INSERT INTO surfboard_sandbox.partners ${sql.insert(row)}`
        return row as PartnerRow
      })

    const createMerchant = (input: {
      readonly partnerId: string
      readonly name: string
      readonly country: string
      readonly terminals: ReadonlyArray<{ readonly name: string; readonly kind: "card" | "PaymentPage" }>
    }) =>
      sql.withTransaction(Effect.gen(function*() {
        const merchant: MerchantRow & { created_at: Date } = {
          id: newId("merchant"),
          partner_id: input.partnerId,
          name: input.name,
          country: input.country,
          created_at: yield* now
        }
        yield* sql`INSERT INTO surfboard_sandbox.merchants ${sql.insert(merchant)}`
        const terminals: Array<TerminalRow> = input.terminals.map((t) => ({
          id: newId("terminal"),
          merchant_id: merchant.id,
          name: t.name,
          kind: t.kind
        }))
        if (terminals.length > 0) yield* sql`INSERT INTO surfboard_sandbox.terminals ${sql.insert(terminals)}`
        return { merchant: merchant as MerchantRow, terminals }
      }))

    const partnerById = (id: string) =>
      sql<PartnerRow>`SELECT id, name, api_key, api_secret FROM surfboard_sandbox.partners WHERE id = ${id}`.pipe(
        Effect.flatMap((rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(notFound(`Partner ${id}`))))
      )

    const partnerByKey = (apiKey: string) =>
      sql<PartnerRow>`SELECT id, name, api_key, api_secret FROM surfboard_sandbox.partners WHERE api_key = ${apiKey}`
        .pipe(
          Effect.map((rows) => rows[0])
        )

    const merchantById = (id: string) =>
      sql<MerchantRow>`SELECT id, partner_id, name, country FROM surfboard_sandbox.merchants WHERE id = ${id}`.pipe(
        Effect.map((rows) => rows[0])
      )

    const terminalsOf = (merchantId: string) =>
      sql<TerminalRow>`
        SELECT id, merchant_id, name, kind FROM surfboard_sandbox.terminals WHERE merchant_id = ${merchantId} ORDER BY name, id`

    const terminalOf = (merchantId: string, terminalId: string) =>
      sql<TerminalRow>`
        SELECT id, merchant_id, name, kind FROM surfboard_sandbox.terminals
        WHERE id = ${terminalId} AND merchant_id = ${merchantId}`.pipe(
        Effect.flatMap((rows) =>
          rows[0]
            ? Effect.succeed(rows[0])
            : Effect.fail(badRequest(`Terminal ${terminalId} not found for this merchant.`, "TERMINAL_NOT_FOUND"))
        )
      )

    return { createPartner, createMerchant, partnerById, partnerByKey, merchantById, terminalsOf, terminalOf }
  })
