/**
 * A span around a call to another system whose definite "no" is an answer, not a failure: an
 * error for which `isFailure` is false (a booking system's 404 or "sold out", a 4xx the adapter
 * turned into a rejection) ends the span OK, so a request that handles it shows no ERROR span; only
 * a failure (the system did not answer: transport, timeout, 5xx) marks it ERROR. The error still
 * reaches the caller unchanged, and `error.type` on the span names it.
 */
import { Effect, Either, type Tracer } from "effect"

export const withAnswerSpan = <E>(
  name: string,
  options: Tracer.SpanOptions,
  isFailure: (error: E) => boolean,
  typeOf: (error: E) => string
) =>
<A, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.map((value): Either.Either<A, E> => Either.right(value)),
    Effect.catchIf(
      (error) => !isFailure(error),
      (error) => Effect.as(Effect.annotateCurrentSpan("error.type", typeOf(error)), Either.left(error))
    ),
    Effect.withSpan(name, options),
    Effect.flatMap((answer) => answer)
  )
