/**
 * The edge of a repository (`…Repo.ts`): what the database or a row's decoding can throw
 * (`SqlError`, `ParseError`, and `NoSuchElementException` from `SqlSchema.single` when the row must
 * exist) is a defect there, once, so only domain errors reach the services; and every call is a
 * span named after the repository's method.
 */
import type { SqlError } from "@effect/sql"
import { type Cause, Effect, type ParseResult } from "effect"

/** What a repository method may fail with before its edge. */
export type RepoFailure = SqlError.SqlError | ParseResult.ParseError | Cause.NoSuchElementException

/** A repository method: infrastructure errors become defects here, and the call is the span `name`. */
export const repoMethod = <Args extends ReadonlyArray<any>, A, R>(
  name: string,
  f: (...args: Args) => Effect.Effect<A, RepoFailure, R>
) =>
(...args: Args): Effect.Effect<A, never, R> => f(...args).pipe(Effect.orDie, Effect.withSpan(name))
