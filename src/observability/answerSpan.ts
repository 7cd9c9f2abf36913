/**
 * A span around a call to another system whose definite "no" is an answer, not a failure: an
 * error for which `isAnswer` holds (a booking system's 404 or "sold out", a 4xx the adapter turned
 * into a rejection) ends the span OK, so a request that handles it shows no ERROR span; any other
 * failure (the system did not answer: transport, timeout, 5xx) marks it ERROR. The error still
 * reaches the caller unchanged, and `error.type` on the span names it.
 */
import { Effect, Either, Predicate, type Tracer } from "effect"
import { annotateSpan } from "./spanFn.js"

export const withAnswerSpan = (
  name: string,
  options: Tracer.SpanOptions,
  isAnswer: (error: unknown) => boolean,
  typeOf: (error: unknown) => string
) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  self.pipe(
    Effect.map((value): Either.Either<A, E> => Either.right(value)),
    Effect.catchIf(
      (error) => isAnswer(error),
      (error) => Effect.as(annotateSpan({ "error.type": typeOf(error) }), Either.left(error))
    ),
    Effect.withSpan(name, options),
    Effect.flatMap((answer) => answer)
  )

/** `isAnswer` for a port whose definite "no" is the tagged error `tag`. */
export const taggedAnswer = (tag: string) => (error: unknown) => Predicate.isTagged(error, tag)
