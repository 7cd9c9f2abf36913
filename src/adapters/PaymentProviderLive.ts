/**
 * The PaymentProvider port's implementation: the Surfboard adapter. Needs an HttpClient (e.g.
 * NodeHttpClient.layer). The account each call acts on is data: the live one comes from
 * configuration (`livePaymentAccount`), the sandbox's from `sandbox.account(merchant)`.
 */
import { Effect, Layer, Option } from "effect"
import { PaymentProviderConfig } from "../payments/config.js"
import { type PaymentAccount, PaymentProvider } from "../ports/PaymentProvider.js"
import { defaultAdapterOptions, makeSurfboardAdapter, type SurfboardAdapterOptions } from "./surfboard/adapter.js"

export type PaymentProviderOptions = Partial<SurfboardAdapterOptions>

/** The port with explicit options (tests: short timeouts and backoff). */
export const paymentProviderLayer = (options: PaymentProviderOptions = {}) =>
  Layer.effect(PaymentProvider, makeSurfboardAdapter({ ...defaultAdapterOptions, ...options }))

/** The port configured from SURFBOARD_TIMEOUT_MS and SURFBOARD_RETRIES. */
export const PaymentProviderLive = Layer.unwrapEffect(
  Effect.map(
    PaymentProviderConfig,
    (config) => paymentProviderLayer({ timeout: `${config.timeoutMs} millis`, retries: config.retries })
  )
)

/**
 * The live merchant account from SURFBOARD_BASE_URL, SURFBOARD_API_KEY, SURFBOARD_API_SECRET and
 * SURFBOARD_MERCHANT_ID (none when any is missing). Calls for another merchant of the same partner
 * use `{ ...account, merchantId }`.
 */
export const livePaymentAccount = Effect.map(
  PaymentProviderConfig,
  (config): Option.Option<PaymentAccount> =>
    Option.all({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      apiSecret: config.apiSecret,
      merchantId: config.merchantId
    }).pipe(Option.map((parts) => ({
      id: "surfboard-live",
      ...parts,
      paymentPageTerminalId: Option.getOrNull(config.paymentPageTerminalId)
    })))
)
