/**
 * A Surfboard sandbox on a fresh database plus the PaymentProvider port pointed at it over real
 * HTTP, with short timeouts and backoff so fault tests stay quick.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { paymentProviderLayer, type PaymentProviderOptions } from "../../src/adapters/PaymentProviderLive.js"
import { pgClientLayer } from "../../src/db/Database.js"
import { SurfboardSandboxLive } from "../../src/sandbox/surfboard/index.js"
import { freshDatabase } from "../support/server.js"

export const TEST_PAYMENTS: PaymentProviderOptions = {
  timeout: "1 second",
  retries: 2,
  retryBase: "20 millis"
}

export const surfboardEnv = (options: PaymentProviderOptions = TEST_PAYMENTS) =>
  Layer.unwrapEffect(
    Effect.map(freshDatabase, (url) =>
      Layer.mergeAll(SurfboardSandboxLive(), paymentProviderLayer(options)).pipe(
        Layer.provideMerge(NodeHttpClient.layer),
        Layer.provideMerge(pgClientLayer(url, 4))
      ))
  ).pipe(Layer.orDie)
