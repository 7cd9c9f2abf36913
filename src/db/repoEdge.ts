/**
 * The edge of a repository (ARCHITECTURE.md "SQL"): a repository's statements go through here once,
 * so that each method is a span named `<Repo>.<method>` and the infrastructure's failures become
 * defects at this one place: a `SqlError`, a row that does not decode (`ParseError`), a statement
 * that must give a row and gave none (`NoSuchElementException`, from `SqlSchema.single`). Only what
 * the feature itself means reaches its services.
 *
 * `repoEdge` is how every repository returns its methods. `repoEdge.untraced` is the same edge
 * without a span per method, for the statements every request runs on the benchmarked paths (key
 * look-ups, rate limits, the bookings and manifest reads, the write wrapper's statements): a span
 * costs about 8 µs with tracing off (docs/decisions.md), the caller's span and the driver's cover them.
 * `moves` builds the statement of a method that answers whether it found (and wrote) its row.
 */
import { type SqlClient, SqlSchema } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, flow, Option, type ParseResult, Predicate, Schema } from "effect"

/** What the database can fail with that no service handles. */
export type Infrastructure = SqlError | ParseResult.ParseError | Cause.NoSuchElementException

const isInfrastructure = (e: unknown): e is Infrastructure =>
  Predicate.isTagged(e, "SqlError") || Predicate.isTagged(e, "ParseError") || Cause.isNoSuchElementException(e)

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Method = (...args: ReadonlyArray<any>) => Effect.Effect<any, any, any>

export type AtEdge<F extends Method> = F extends (...args: infer A) => Effect.Effect<infer X, infer E, infer R>
  ? (...args: A) => Effect.Effect<X, Exclude<E, Infrastructure>, R>
  : never

type Edge<M extends Record<string, Method>> = { readonly [K in keyof M]: AtEdge<M[K]> }

const atEdge = (method: Method) =>
// eslint-disable-next-line @typescript-eslint/no-explicit-any
(...args: ReadonlyArray<any>) => Effect.catchIf(method(...args), isInfrastructure, Effect.die)

/** The repository `repo`'s methods, each spanned `<repo>.<method>` and with its infrastructure failures as defects. */
const spanned = <M extends Record<string, Method>>(repo: string, methods: M): Edge<M> =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => [
      name,
      Effect.fn(`${repo}.${name}`)(
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        function*(...args: ReadonlyArray<any>) {
          return yield* method(...args)
        },
        Effect.catchIf(isInfrastructure, Effect.die)
      )
    ])
  ) as Edge<M>

/** The same edge without spans (see the module comment): for the statements of every request. */
const untraced = <M extends Record<string, Method>>(methods: M): Edge<M> =>
  Object.fromEntries(Object.entries(methods).map(([name, method]) => [name, atEdge(method)])) as Edge<M>

export const repoEdge = Object.assign(spanned, { untraced })

/** `sql.withTransaction` for a service: the transaction's own `SqlError` (BEGIN, COMMIT) is a defect too. */
export const transactionAtEdge =
  (sql: SqlClient.SqlClient) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    Effect.catchIf(
      sql.withTransaction(self),
      (e): e is SqlError => Predicate.isTagged(e, "SqlError"),
      Effect.die
    ) as Effect.Effect<
      A,
      Exclude<E, SqlError>,
      R
    >

/** An UPDATE or INSERT … RETURNING: whether it found (and wrote) the row. */
export const moves = <I, II>(
  Request: Schema.Schema<I, II>,
  execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, SqlError>
) => flow(SqlSchema.findOne({ Request, Result: Schema.Unknown, execute }), Effect.map(Option.isSome))

/** A row read only for its id: the row a statement found, claimed or wrote (`RETURNING id`). */
export const IdRow = Schema.Struct({ id: Schema.String })

/**
 * The row a statement always gives (an upsert or an UPDATE of a seeded row with RETURNING), typed by
 * the statement's `sql<Row>` without a Schema pass (for statements on hot paths): none is a
 * `NoSuchElementException`, a defect at the edge, never an `undefined` read further on.
 */
export const theRow = <A>(rows: ReadonlyArray<A>): Effect.Effect<A, Cause.NoSuchElementException> =>
  rows.length > 0
    ? Effect.succeed(rows[0]!)
    : Effect.fail(new Cause.NoSuchElementException("the statement gave no row"))
