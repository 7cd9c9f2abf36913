/** Settings of the HTTP server's timeouts and its shutdown. */
import { Config, ConfigError, Duration, Either, Option } from "effect"

/** The HTTP server's timeouts and its shutdown (src/http/lifecycle/, docs/operations.md). */
export const HttpServerConfig = Config.all({
  /** Time a client has to send a request's headers (node's `headersTimeout`; 408 past it). */
  headersTimeoutMs: Config.integer("HTTP_HEADERS_TIMEOUT_MS").pipe(Config.withDefault(20_000)),
  /** Time a client has to send a whole request, body included (node's `requestTimeout`; 408 past it). */
  requestTimeoutMs: Config.integer("HTTP_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(60_000)),
  /**
   * How long an idle keep-alive connection stays open. Above a load balancer's idle timeout (60 s
   * for most), so that the balancer, not the service, closes idle connections.
   */
  keepAliveTimeoutMs: Config.integer("HTTP_KEEP_ALIVE_TIMEOUT_MS").pipe(Config.withDefault(65_000))
}).pipe(
  Config.validate({
    message: "HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS",
    validation: (c) => c.requestTimeoutMs === 0 || c.headersTimeoutMs <= c.requestTimeoutMs
  })
)

/**
 * The longest a shutdown (SIGTERM, SIGINT) may take: draining HTTP, stopping the jobs and the
 * cluster runner, closing the pool. Past it the process exits anyway (code 1). A number is seconds;
 * `"500 millis"`, `"1 minute"` … are read as durations.
 */
export const ShutdownConfig = Config.all({
  timeout: Config.string("SHUTDOWN_TIMEOUT").pipe(
    Config.withDefault("25"),
    Config.mapOrFail((text) => {
      const seconds = Number(text)
      const duration = text.trim() !== "" && Number.isFinite(seconds)
        ? Option.some(Duration.seconds(seconds))
        : Duration.decodeUnknown(text)
      return Option.match(Option.filter(duration, (d) => Duration.toMillis(d) > 0), {
        onNone: () => Either.left(ConfigError.InvalidData(["SHUTDOWN_TIMEOUT"], `not a positive duration: ${text}`)),
        onSome: Either.right
      })
    })
  )
})
