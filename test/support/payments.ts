/**
 * Writes that move money, end to end: the Surfboard and Bókun sandboxes over HTTP and the real
 * server on one fresh database (the sandboxes in their own schemas), the service using a Surfboard
 * partner's credentials for the operators' merchants; and the fixtures that link an operator to a
 * merchant and to a Bókun vendor.
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { pgClientLayer } from "../../src/db/Database.js"
import { addDays, BokunSandbox, BokunSandboxLive, localDay, type ProductSpec } from "../../src/sandbox/bokun/index.js"
import { SurfboardSandbox, SurfboardSandboxLive } from "../../src/sandbox/surfboard/index.js"
import { smallVendor } from "../sandbox/env.js"
import { type BookingInput, insertBooking } from "./fixtures.js"
import { freshDatabase, serverOn } from "./server.js"

/** The Surfboard partner whose credentials the service uses (its merchants are the operators'). */
export class PartnerId extends Context.Tag("test/SurfboardPartnerId")<PartnerId, string>() {}

/** The database and settings the server runs with: another instance (e.g. one that crashes) can use them. */
export class ServerSettings extends Context.Tag("test/ServerSettings")<ServerSettings, {
  readonly databaseUrl: string
  readonly env: Record<string, string>
}>() {}

/**
 * Sandboxes and the server on one fresh database; `extra` settings on top of the Surfboard ones.
 * `serverDatabase` gives the server another way to the same database (e.g. through ./dbProxy.ts);
 * the sandboxes and the settings keep the direct URL.
 */
export const paymentsEnv = (
  extra: Effect.Effect<Record<string, string>> = Effect.succeed({}),
  serverDatabase: (url: string) => Effect.Effect<string, never, Scope.Scope> = Effect.succeed
) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const more = yield* extra
    const url = yield* freshDatabase
    const serverUrl = yield* serverDatabase(url)
    const sandboxes = Layer.mergeAll(SurfboardSandboxLive(), BokunSandboxLive()).pipe(
      Layer.provide(pgClientLayer(url, 4))
    )
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
      return serverOn(serverUrl, env).pipe(
        Layer.provideMerge(Layer.succeed(PartnerId, partner.id)),
        Layer.provideMerge(Layer.succeed(ServerSettings, { databaseUrl: url, env }))
      )
    }))
    return server.pipe(Layer.provideMerge(sandboxes))
  })).pipe(Layer.orDie)

/**
 * A Surfboard sandbox merchant for the operator, recorded as its payment account (a sandbox one);
 * `terminalId` is its card terminal (register desk terminals with it).
 */
export const merchantFor = (operatorId: string) =>
  Effect.gen(function*() {
    const surfboard = yield* SurfboardSandbox
    const partnerId = yield* PartnerId
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* surfboard.createMerchant({ name: `Merchant ${operatorId.slice(0, 6)}`, partnerId })
    yield* sql`
      INSERT INTO operator_payment_accounts (operator_id, merchant_id, payment_page_terminal_id, sandbox)
      VALUES (${operatorId}, ${merchant.id}, ${merchant.paymentPageTerminalId}, true)`.pipe(Effect.orDie)
    return merchant
  })

/**
 * A Bókun sandbox vendor as the operator's booking-system account (a sandbox one); `products`
 * replaces the small vendor's one product.
 */
export const vendorFor = (operatorId: string, o: { readonly products?: ReadonlyArray<ProductSpec> } = {}) =>
  Effect.gen(function*() {
    const bokun = yield* BokunSandbox
    const sql = yield* SqlClient.SqlClient
    const vendor = yield* bokun.createVendor({ ...smallVendor(`Vendor ${randomUUID().slice(0, 6)}`), ...o })
    const [account] = yield* sql<{ id: string }>`
      INSERT INTO booking_system_accounts (kind, name, base_url, access_key, secret_key, service_channel_id, sandbox)
      VALUES ('bokun', ${vendor.title}, ${bokun.baseUrl}, ${vendor.accessKey}, ${vendor.secretKey}, ${
      String(vendor.serviceChannelId)
    }, true)
      RETURNING id`.pipe(Effect.orDie)
    yield* sql`UPDATE operators SET booking_system_account_id = ${account!.id} WHERE id = ${operatorId}`.pipe(
      Effect.orDie
    )
    return { vendor, accountId: account!.id }
  })

/** Emails in the local mailbox addressed to `address`, oldest first. */
export const mailTo = (address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ subject: string; text_body: string }>`
      SELECT subject, text_body FROM mail_mailbox WHERE ${address.toLowerCase()} = ANY(to_addresses) ORDER BY id`.pipe(
      Effect.orDie
    ))

/**
 * Our booking of 2 adults on the operator's tour mapped to the vendor's first product, on day+5
 * 10:00 (Oslo) at its first rate, also in the Bókun sandbox (external reference = our confirmation
 * code, `provider_reference` = the sandbox's code). `input` overrides the booking's fields.
 */
export const linkedBooking = (
  operatorId: string,
  vendor: Effect.Effect.Success<ReturnType<typeof vendorFor>>["vendor"],
  input: Omit<BookingInput, "operatorId"> = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bokun = yield* BokunSandbox
    const product = vendor.products[0]!
    const [tour] = yield* sql<{ id: string }>`
      INSERT INTO tours (operator_id, title, status, timezone, currency, booking_system_product_id)
      VALUES (${operatorId}, 'Harbour Cruise', 'published', 'Europe/Oslo', 'NOK', ${String(product.id)}) RETURNING id`
      .pipe(Effect.orDie)
    const day = addDays(localDay(Date.now(), "Europe/Oslo"), 5)
    const bookingId = yield* insertBooking({
      tourName: "Harbour Cruise",
      experienceDate: day,
      startTime: "10:00",
      participants: 2,
      amountMinor: 99800,
      ...input,
      operatorId,
      tourId: tour!.id
    })
    const [{ confirmation_code: code }] = (yield* sql<{ confirmation_code: string }>`
      SELECT confirmation_code FROM bookings WHERE id = ${bookingId}`.pipe(Effect.orDie)) as [
      { confirmation_code: string }
    ]
    const seeded = yield* bokun.addBooking({
      vendorId: vendor.id,
      productId: product.id,
      date: day,
      startTime: "10:00",
      rateId: product.rates[0]!.id,
      participants: 2,
      channel: "service",
      externalReference: code
    })
    yield* sql`UPDATE bookings SET provider_reference = ${seeded.confirmationCode} WHERE id = ${bookingId}`.pipe(
      Effect.orDie
    )
    return { bookingId, code, seeded, day }
  })

/**
 * A card payment of the booking at the Surfboard sandbox, recorded in `booking_payments`; `at`
 * moves the sandbox's clock for it (a payment made yesterday can no longer be voided), `recordedAt`
 * is what our record says (default: `at`, or now).
 */
export const paidAtSandbox = (
  booking: { readonly bookingId: string; readonly code: string },
  merchantId: string,
  amountMinor: number,
  o: { at?: Date; purpose?: "full" | "reservation_fee" | "balance"; recordedAt?: Date } = {}
) =>
  Effect.gen(function*() {
    const surfboard = yield* SurfboardSandbox
    const sql = yield* SqlClient.SqlClient
    if (o.at) yield* surfboard.clock.set(o.at)
    const sale = yield* surfboard.createPaidOrder({
      merchantId,
      amountMinor,
      currency: "NOK",
      referenceId: booking.code
    }).pipe(
      Effect.ensuring(surfboard.clock.reset)
    )
    yield* sql`
      INSERT INTO booking_payments (booking_id, purpose, merchant_id, provider_order_id, provider_payment_id, amount_minor, currency, paid_at)
      VALUES (${booking.bookingId}, ${
      o.purpose ?? "full"
    }, ${merchantId}, ${sale.orderId}, ${sale.paymentId}, ${amountMinor}, 'NOK',
        ${o.recordedAt ?? o.at ?? new Date()})`.pipe(Effect.orDie)
    return sale
  })

/** Money the sandbox returned for a purchase: completed refunds, and a void of the whole payment. */
export const returnedBySandbox = (orderId: string) =>
  Effect.gen(function*() {
    const surfboard = yield* SurfboardSandbox
    const sql = yield* SqlClient.SqlClient
    const refunds = yield* surfboard.refundsOf(orderId)
    const [voided] = yield* sql<{ n: number }>`
      SELECT coalesce(sum(o.amount_minor), 0)::int AS n FROM surfboard_sandbox.payments p JOIN surfboard_sandbox.orders o ON o.id = p.order_id
      WHERE p.order_id = ${orderId} AND p.void_status = 'VOIDED'`.pipe(Effect.orDie)
    return {
      refundOrders: refunds.length,
      refunded: refunds.reduce((sum, r) => sum + r.refundedMinor, 0),
      voided: voided!.n
    }
  })

/**
 * What the sandbox returned, judged as "`amountMinor` came back once": by a void of the payment the
 * same UTC day before 23:00, else by one refund (a test running across 23:00 UTC sees either).
 */
export const returnedOnce = (orderId: string, amountMinor: number) =>
  Effect.map(returnedBySandbox(orderId), (r) =>
    r.voided === amountMinor && r.refunded === 0 && r.refundOrders === 0
    || r.voided === 0 && r.refunded === amountMinor && r.refundOrders === 1)
