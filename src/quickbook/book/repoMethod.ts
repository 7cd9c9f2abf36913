/**
 * The edge of the book's repositories (QuickbookBookRepo, QuickbookMoneyReturnRepo): every method
 * spanned `<Repo>.<method>`, and its infrastructure errors (SqlError, ParseError of a row that does
 * not decode, NoSuchElementException of a row that must be there) turned into defects, here, once.
 */
import { SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { type Cause, Effect, flow, Option, type ParseResult, Schema } from "effect"

type RepoError = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

/** A repository method of `repo`: spanned, its infrastructure errors defects. */
export const repoMethod =
  (repo: string) =>
  <Args extends Array<any>, A, E extends RepoError, R>(name: string, body: (...args: Args) => Effect.Effect<A, E, R>) =>
    Effect.fn(`${repo}.${name}`)(body, (effect: Effect.Effect<A, E, R>, ..._: Array<unknown>) => Effect.orDie(effect))

/** An UPDATE or INSERT … RETURNING: whether it found (and wrote) the row. */
export const moves = <I, II>(
  Request: Schema.Schema<I, II>,
  execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, SqlError>
) => flow(SqlSchema.findOne({ Request, Result: Schema.Unknown, execute }), Effect.map(Option.isSome))
