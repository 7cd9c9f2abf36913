/**
 * Writes that move money, end to end: the Surfboard and Bókun sandboxes over HTTP and the real
 * server on one fresh database (the sandboxes in their own schemas), the service using a Surfboard
 * partner's credentials for the operators' merchants; and the fixtures that link an operator to a
 * merchant and to a Bókun vendor.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { pgClientLayer } from "../../src/db/Database.js"
import { BokunSandbox, BokunSandboxLive } from "../../src/sandbox/bokun/index.js"
import { SurfboardSandbox, SurfboardSandboxLive } from "../../src/sandbox/surfboard/index.js"
import { smallVendor } from "../sandbox/env.js"
import { freshDatabase, serverOn } from "./server.js"

/** The Surfboard partner whose credentials the service uses (its merchants are the operators'). */
export class PartnerId extends Context.Tag("test/SurfboardPartnerId")<PartnerId, string>() {}

/** The database and settings the server runs with: another instance (e.g. one that crashes) can use them. */
export class ServerSettings extends Context.Tag("test/ServerSettings")<ServerSettings, {
  readonly databaseUrl: string
  readonly env: Record<string, string>
}>() {}

/** Sandboxes and the server on one fresh database; `extra` settings on top of the Surfboard ones. */
export const paymentsEnv = (extra: Effect.Effect<Record<string, string>> = Effect.succeed({})) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const more = yield* extra
    const url = yield* freshDatabase
    const sandboxes = Layer.mergeAll(SurfboardSandboxLive(), BokunSandboxLive()).pipe(Layer.provide(pgClientLayer(url, 4)))
    const server = Layer.unwrapEffect(Effect.gen(function*() {
      const surfboard = yield* SurfboardSandbox
      const partner = yield* surfboard.createPartner("Tour Partner Service")
      const env = {
        SURFBOARD_BASE_URL: surfboard.baseUrl,
        SURFBOARD_API_KEY: partner.apiKey,
        SURFBOARD_API_SECRET: partner.apiSecret,
        SURFBOARD_TIMEOUT_MS: "2000",
        SURFBOARD_RETRIES: "1",
        BOKUN_TIMEOUT_MS: "2000",
        BOKUN_RETRIES: "1",
        ...more
      }
      return serverOn(url, env).pipe(
        Layer.provideMerge(Layer.succeed(PartnerId, partner.id)),
        Layer.provideMerge(Layer.succeed(ServerSettings, { databaseUrl: url, env }))
      )
    }))
    return server.pipe(Layer.provideMerge(sandboxes))
  })).pipe(Layer.orDie)

/** A Surfboard sandbox merchant for the operator, recorded as its payment account. */
export const merchantFor = (operatorId: string) =>
  Effect.gen(function*() {
    const surfboard = yield* SurfboardSandbox
    const partnerId = yield* PartnerId
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* surfboard.createMerchant({ name: `Merchant ${operatorId.slice(0, 6)}`, partnerId })
    yield* sql`
      INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id)
      VALUES (${operatorId}, ${merchant.id}, ${merchant.paymentPageTerminalId})`.pipe(Effect.orDie)
    return merchant
  })

/** A Bókun sandbox vendor as the operator's booking-system account. */
export const vendorFor = (operatorId: string) =>
  Effect.gen(function*() {
    const bokun = yield* BokunSandbox
    const sql = yield* SqlClient.SqlClient
    const vendor = yield* bokun.createVendor(smallVendor(`Vendor ${randomUUID().slice(0, 6)}`))
    const [account] = yield* sql<{ id: string }>`
      INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id)
      VALUES ('bokun', ${vendor.title}, ${bokun.baseUrl}, ${vendor.accessKey}, ${vendor.secretKey}, ${String(vendor.serviceChannelId)})
      RETURNING id`.pipe(Effect.orDie)
    yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${operatorId}`.pipe(Effect.orDie)
    return { vendor, accountId: account!.id }
  })

/** Emails in the local mailbox addressed to `address`, oldest first. */
export const mailTo = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ subject: string; text_body: string }>`
      SELECT subject, text_body FROM mail_mailbox WHERE ${address.toLowerCase()} = ANY(to_addresses) ORDER BY id`.pipe(
      Effect.orDie
    ))
