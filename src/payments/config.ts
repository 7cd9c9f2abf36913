import { Config } from "effect"

/**
 * The payment provider (Surfboard Payments): where its API is, the partner credentials, the
 * merchant calls are made for by default, and how calls are timed and retried. Read by
 * `PaymentProviderLive` (timeouts, retries) and `livePaymentAccount` (the account). Without
 * SURFBOARD_BASE_URL, SURFBOARD_API_KEY, SURFBOARD_API_SECRET and SURFBOARD_MERCHANT_ID there is no
 * live account: only the sandbox (test keys, tests, the demo) moves money.
 */
export const PaymentProviderConfig = Config.all({
  /** The API base URL Surfboard gives at onboarding (its reference writes YOUR_API_URL). */
  baseUrl: Config.option(Config.string("SURFBOARD_BASE_URL")),
  apiKey: Config.option(Config.redacted("SURFBOARD_API_KEY")),
  apiSecret: Config.option(Config.redacted("SURFBOARD_API_SECRET")),
  merchantId: Config.option(Config.string("SURFBOARD_MERCHANT_ID")),
  /** The merchant's online (PaymentPage) terminal, where payment links are made. */
  paymentPageTerminalId: Config.option(Config.string("SURFBOARD_PAYMENT_PAGE_TERMINAL_ID")),
  /** Time allowed for one attempt of one call, answer included. */
  timeoutMs: Config.integer("SURFBOARD_TIMEOUT_MS").pipe(Config.withDefault(15_000)),
  /** Retries of reads after the first attempt; calls that move money are never retried by the adapter. */
  retries: Config.integer("SURFBOARD_RETRIES").pipe(Config.withDefault(2))
})

export type PaymentProviderConfig = Config.Config.Success<typeof PaymentProviderConfig>
