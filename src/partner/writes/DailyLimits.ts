/**
 * Daily write limits per key, action and UTC day of the database clock (spec §8), shared by every
 * instance. A write reserves its slot before it acts, with one conditional increment that cannot
 * pass the limit however many requests race (the counter row is locked while it is checked), and
 * gives the slot back when the outcome is refused or a no-op: only writes that changed something
 * stay counted.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { InvalidRequest, NotFound } from "../../domain/errors.js"
import { DEFAULT_DAILY_LIMITS, WRITE_ACTIONS, type WriteAction } from "./rules.js"

export type Reservation =
  | { readonly _tag: "Reserved"; readonly day: string }
  | { readonly _tag: "Exhausted"; readonly limit: number; readonly retryAfterSeconds: number }

/** A slot held for one write: which counter to give it back to. */
export interface Slot {
  readonly keyId: string
  readonly action: WriteAction
  readonly day: string
}

export interface LimitStatus {
  readonly action: WriteAction
  readonly limit: number
  /** True when the key has its own limit for this action. */
  readonly overridden: boolean
  readonly used_today: number
}

export class DailyLimits extends Effect.Service<DailyLimits>()("Partner/DailyLimits", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Takes one slot of today's limit, or says when the next one frees up (next UTC midnight). */
    const reserve = Effect.fn("DailyLimits.reserve")(function*(keyId: string, action: WriteAction) {
      yield* Effect.annotateCurrentSpan({ action })
      const [row] = yield* sql<{ daily_limit: number; day: string; used: number | null; reset_seconds: number }>`
        WITH lim AS (
          SELECT coalesce(
              (SELECT daily_limit FROM api_key_daily_limits WHERE key_id = ${keyId} AND action = ${action}),
              ${DEFAULT_DAILY_LIMITS[action]}::int) AS value,
            (now() AT TIME ZONE 'UTC')::date AS day
        ), slot AS (
          INSERT INTO daily_write_counters AS c (key_id, action, day, used)
          SELECT ${keyId}, ${action}, lim.day, 1 FROM lim WHERE lim.value >= 1
          ON CONFLICT (key_id, action, day) DO UPDATE SET used = c.used + 1
          WHERE c.used < (SELECT value FROM lim)
          RETURNING c.used
        )
        SELECT lim.value AS daily_limit, lim.day::text AS day, slot.used,
          ceil(extract(epoch FROM ((lim.day + 1)::timestamp AT TIME ZONE 'UTC') - now()))::int AS reset_seconds
        FROM lim LEFT JOIN slot ON true`.pipe(Effect.orDie)
      const reservation: Reservation = row!.used !== null
        ? { _tag: "Reserved", day: row!.day }
        : { _tag: "Exhausted", limit: row!.daily_limit, retryAfterSeconds: Math.max(1, row!.reset_seconds) }
      return reservation
    })

    /** Returns a slot (the write was refused or changed nothing). */
    const giveBack = Effect.fn("DailyLimits.giveBack")(function*(slot: Slot) {
      yield* Effect.annotateCurrentSpan({ action: slot.action })
      yield* sql`
        UPDATE daily_write_counters SET used = used - 1
        WHERE key_id = ${slot.keyId} AND action = ${slot.action} AND day = ${slot.day}::date AND used > 0`.pipe(Effect.orDie)
    })

    const keyExists = (keyId: string) =>
      sql`SELECT 1 AS ok FROM api_keys WHERE id = ${keyId}`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => rows.length > 0 ? Effect.void : Effect.fail(new NotFound({ detail: `key ${keyId} not found` })))
      )

    /** Every action's limit for the key and what it used today. */
    const statusOf = Effect.fn("DailyLimits.statusOf")(function*(keyId: string) {
      yield* keyExists(keyId)
      const rows = yield* sql<{ action: WriteAction; daily_limit: number | null; used: number | null }>`
        SELECT a.action, l.daily_limit, c.used
        FROM unnest(${`{${WRITE_ACTIONS.join(",")}}`}::text[]) WITH ORDINALITY AS a(action, position)
        LEFT JOIN api_key_daily_limits l ON l.key_id = ${keyId} AND l.action = a.action
        LEFT JOIN daily_write_counters c
          ON c.key_id = ${keyId} AND c.action = a.action AND c.day = (now() AT TIME ZONE 'UTC')::date
        ORDER BY a.position`.pipe(Effect.orDie)
      return rows.map((r): LimitStatus => ({
        action: r.action,
        limit: r.daily_limit ?? DEFAULT_DAILY_LIMITS[r.action],
        overridden: r.daily_limit !== null,
        used_today: r.used ?? 0
      }))
    })

    /** Sets the key's own limits (whole numbers, 0 or more) for the actions given. */
    const setOverrides = Effect.fn("DailyLimits.setOverrides")(function*(keyId: string, limits: Partial<Record<WriteAction, number>>) {
      const entries = Object.entries(limits).filter(([, value]) => value !== undefined) as Array<[WriteAction, number]>
      const bad = entries.find(([, value]) => !Number.isInteger(value) || value < 0)
      if (bad) return yield* new InvalidRequest({ detail: `${bad[0]} must be a whole number, 0 or more`, field: bad[0] })
      yield* keyExists(keyId)
      yield* Effect.forEach(entries, ([action, value]) =>
        sql`
          INSERT INTO api_key_daily_limits (key_id, action, daily_limit) VALUES (${keyId}, ${action}, ${value})
          ON CONFLICT (key_id, action) DO UPDATE SET daily_limit = excluded.daily_limit, updated_at = now()`.pipe(
          Effect.orDie
        ), { discard: true })
    }, sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /** Back to the defaults for the actions given (all when none). */
    const clearOverrides = Effect.fn("DailyLimits.clearOverrides")((keyId: string, actions: ReadonlyArray<WriteAction> = WRITE_ACTIONS) =>
      sql`DELETE FROM api_key_daily_limits WHERE key_id = ${keyId} AND action IN ${sql.in(actions)}`.pipe(
        Effect.orDie,
        Effect.asVoid
      ))

    return { reserve, giveBack, statusOf, setOverrides, clearOverrides } as const
  })
}) {}
