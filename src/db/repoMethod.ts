/**
 * One repository method at a time, for repositories whose methods never fail with anything of the
 * feature's own (the desk's book: QuickbookBookRepo, QuickbookMoneyReturnRepo): each method spanned
 * `<Repo>.<method>` and every error of it (SqlError, ParseError of a row that does not decode,
 * NoSuchElementException of a row that must be there) a defect, here, once. The same edge as
 * repoEdge.ts, which takes a whole object of methods and keeps the feature's own errors.
 */
import { SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, flow, Option, Schema } from "effect"

import type { Infrastructure } from "./repoEdge.js"

/** A repository method of `repo`: spanned, its infrastructure errors defects. */
export const repoMethod = (repo: string) =>
<Args extends Array<unknown>, A, E extends Infrastructure, R>(
  name: string,
  body: (...args: Args) => Effect.Effect<A, E, R>
) => Effect.fn(`${repo}.${name}`)(body, (effect: Effect.Effect<A, E, R>, ..._: Array<unknown>) => Effect.orDie(effect))

/** An UPDATE or INSERT … RETURNING: whether it found (and wrote) the row. */
export const moves = <I, II>(
  Request: Schema.Schema<I, II>,
  execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, SqlError>
) => flow(SqlSchema.findOne({ Request, Result: Schema.Unknown, execute }), Effect.map(Option.isSome))
