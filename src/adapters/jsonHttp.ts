/**
 * What every adapter's HTTP call shares, whatever the system: one attempt with a timeout, transport
 * failures and 5xx/429 answers turned into the port's "unavailable" error, retries with
 * exponential backoff and jitter for calls the adapter says are safe (never for a call that may
 * have acted), a client span per call, and credential headers redacted from traces and logs.
 * Each adapter adds its own headers, how a 2xx is decoded and how a 4xx is rejected.
 */
import { Headers, type HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Fiber, Option, Schedule } from "effect"
import { withAnswerSpan } from "../observability/answerSpan.js"
import { annotateSpan } from "../observability/spanFn.js"

export interface JsonHttpOptions {
  /** Time allowed for one attempt, answer body included. */
  readonly timeout: Duration.DurationInput
  /** Retries after the first attempt, for safe calls only. */
  readonly retries: number
  /** First backoff delay; doubled each retry, with jitter. */
  readonly retryBase: Duration.DurationInput
}

/** How an adapter's errors are made and told apart. */
export interface JsonHttpErrors<E> {
  /** The port's "did not answer" error (retryable unless the reason is `bad_response`). */
  readonly unavailable: (operation: string, reason: string, detail: string) => E
  readonly isUnavailable: (error: E) => boolean
  readonly reasonOf: (error: E) => string
  readonly tagOf: (error: E) => string
}

export interface JsonHttpCall {
  /** Names the span `<system>.<operation>` and the errors. */
  readonly operation: string
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly url: string
  /** Sent as they are; `accept` is application/json unless given. */
  readonly headers: Record<string, string>
  readonly body?: unknown
}

export const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text)

/** The body as JSON (an empty body is null), or none when it does not parse. */
export const parseJson = (text: string): Option.Option<unknown> => {
  if (text.trim() === "") return Option.some(null)
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

export const makeJsonHttp = <E>(
  http: HttpClient.HttpClient,
  system: string,
  options: JsonHttpOptions,
  errors: JsonHttpErrors<E>,
  /** Header names never printed or traced besides the platform's usual ones. */
  secretHeaders: ReadonlyArray<string>
) => {
  const redacted: ReadonlyArray<string> = ["authorization", "cookie", "set-cookie", "x-api-key", ...secretHeaders]
  const retryPolicy = Schedule.exponential(options.retryBase, 2).pipe(
    Schedule.jittered,
    Schedule.intersect(Schedule.recurs(options.retries))
  )
  const isRetryable = (error: E) => errors.isUnavailable(error) && errors.reasonOf(error) !== "bad_response"

  /** Sends the call once; answers the status and the raw body text. */
  const send = (call: JsonHttpCall): Effect.Effect<{ readonly status: number; readonly text: string }, E> =>
    Effect.gen(function*() {
      const unavailable = (reason: string, detail: string) => errors.unavailable(call.operation, reason, detail)
      const url = yield* Effect.try({
        try: () => new URL(call.url),
        catch: () => unavailable("connection", "the base URL is not a valid URL")
      })
      let request = HttpClientRequest.make(call.method)(url, {
        headers: { accept: "application/json", ...call.headers }
      })
      if (call.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, call.body)
      const response = yield* http.execute(request).pipe(
        Effect.catchAll((error) => Effect.fail(unavailable("connection", `${error.reason}: request failed`)))
      )
      const text = yield* response.text.pipe(
        Effect.catchAll(() => Effect.fail(unavailable("connection", "the answer was cut off")))
      )
      yield* annotateSpan({ "http.response.status_code": response.status })
      return { status: response.status, text }
    }).pipe(
      // The exchange runs in a fiber of its own, not a child (a parent's interruption reaches its
      // children at once, even where the parent runs uninterruptibly): its deadline can always cut
      // it, also where the caller runs uninterruptibly (the Partner API's database routes; otherwise a
      // system that never answers holds the request for ever), but the caller's interruption (a
      // client that hung up) never cuts it half-way there: the caller waits for the answer and
      // carries on. An interruptible caller stops waiting at once and takes the exchange down with it.
      Effect.interruptible,
      Effect.timeoutFail({
        duration: options.timeout,
        onTimeout: () =>
          errors.unavailable(call.operation, "timeout", `no answer within ${Duration.format(options.timeout)}`)
      }),
      Effect.forkDaemon,
      Effect.flatMap((exchange) => Fiber.join(exchange).pipe(Effect.onInterrupt(() => Fiber.interrupt(exchange))))
    )

  /** A 5xx or 429 answer: the system did not serve the call (worth retrying when safe). */
  const serverFailure = (operation: string, status: number, text: string): Option.Option<E> =>
    status >= 500 || status === 429
      ? Option.some(
        errors.unavailable(operation, status === 429 ? "rate_limited" : "http_5xx", `HTTP ${status}: ${excerpt(text)}`)
      )
      : Option.none()

  /** Retries `effect` on "unavailable" when `safe`, inside a client span with secrets redacted. */
  const policy = <A>(
    effect: Effect.Effect<A, E>,
    call: { readonly operation: string; readonly safe: boolean; readonly attributes: Record<string, unknown> }
  ): Effect.Effect<A, E> => {
    const prefix = system.toLowerCase()
    const retried = call.safe && options.retries > 0
      ? effect.pipe(
        Effect.tapError((error) =>
          isRetryable(error)
            ? Effect.logDebug(`${system}.${call.operation}: ${errors.reasonOf(error)}, retrying`)
            : Effect.void
        ),
        Effect.retry({ schedule: retryPolicy, while: isRetryable })
      )
      : effect
    return retried.pipe(
      Effect.tapError((error) =>
        annotateSpan({ [`${prefix}.error`]: `${errors.tagOf(error)}:${errors.reasonOf(error)}` })
      ),
      Effect.locally(Headers.currentRedactedNames, redacted),
      // A definite "no" (a 4xx the adapter turned into a rejection, such as a 404 the caller
      // handles) ends the span OK; only "unavailable" marks it ERROR.
      withAnswerSpan(
        `${system}.${call.operation}`,
        { kind: "client", attributes: call.attributes },
        (error) => !errors.isUnavailable(error as E),
        (error) => errors.tagOf(error as E)
      )
    )
  }

  return { send, serverFailure, policy }
}
