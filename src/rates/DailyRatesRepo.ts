/**
 * All SQL of the daily exchange rates (`exchange_rates`, migration 0022; src/rates/DailyRates.ts).
 * Typed with SqlSchema; a database error is a defect at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"
import { toPgArray } from "../db/sql.js"
import type { DailyRate } from "../ports/ExchangeRates.js"

export const StoredRate = Schema.Struct({
  currency: Schema.String,
  day: Schema.String,
  nokPerUnit: Schema.NumberFromString,
  source: Schema.Literal("norges_bank", "ecb")
})
export type StoredRate = typeof StoredRate.Type

export class DailyRatesRepo extends Effect.Service<DailyRatesRepo>()("Rates/DailyRatesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Inserts the rates, or replaces a stored rate whose value or source differs; a rate from the
     * ECB (the fallback) never replaces one from Norges Bank (the source of record). Answers how many
     * rows were written (0 when nothing changed: a re-run is a no-op).
     */
    const upsert = (rates: ReadonlyArray<DailyRate>) =>
      rates.length === 0 ? Effect.succeed(0) : Effect.map(
        sql<{ written: number }>`
          WITH written AS (
            INSERT INTO exchange_rates (currency, day, nok_per_unit, source, fetched_at)
            SELECT r.currency, r.day, r.nok_per_unit, r.source, now()
            FROM unnest(
              ${toPgArray(rates.map((r) => r.currency))}::text[],
              ${toPgArray(rates.map((r) => r.day))}::date[],
              ${toPgArray(rates.map((r) => String(r.nokPerUnit)))}::numeric[],
              ${toPgArray(rates.map((r) => r.source))}::text[]
            ) AS r(currency, day, nok_per_unit, source)
            ON CONFLICT (currency, day) DO UPDATE
              SET nok_per_unit = excluded.nok_per_unit, source = excluded.source, fetched_at = excluded.fetched_at
              WHERE (exchange_rates.nok_per_unit <> excluded.nok_per_unit OR exchange_rates.source <> excluded.source)
                AND (excluded.source = 'norges_bank' OR exchange_rates.source = 'ecb')
            RETURNING 1
          )
          SELECT count(*)::int AS written FROM written`,
        (rows) => rows[0]?.written ?? 0
      )

    /** Whether the table holds no rate at all. */
    const isEmpty = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ empty: Schema.Boolean }),
      execute: () => sql`SELECT NOT EXISTS (SELECT 1 FROM exchange_rates) AS empty`
    })

    /** The stored rates of `currencies` (every currency when empty) in [from, to]. */
    const range = SqlSchema.findAll({
      Request: Schema.Struct({
        currencies: Schema.Array(Schema.String),
        from: Schema.String,
        to: Schema.String
      }),
      Result: StoredRate,
      execute: (r) =>
        sql`
          SELECT currency, day::text AS day, nok_per_unit::text AS "nokPerUnit", source
          FROM exchange_rates
          WHERE day BETWEEN ${r.from}::date AND ${r.to}::date
            ${r.currencies.length === 0 ? sql`` : sql`AND currency IN ${sql.in(r.currencies)}`}
          ORDER BY currency, day`
    })

    return repoEdge("DailyRatesRepo", {
      upsert,
      isEmpty: () => Effect.map(isEmpty(undefined), (r) => r.empty),
      range
    })
  })
}) {}
