/**
 * The SQL of the daily write limits (DailyLimits; `daily_write_counters`, `api_key_daily_limits`),
 * typed with SqlSchema and the row schemas below; a database error or a row that does not decode is
 * a defect here, once.
 *
 * `reserve` and `giveBack` run on every write, the check-in measured by `npm run bench` among them:
 * they keep plain `sql<Row>` typed rows and have no spans of their own (`repoEdge.untraced`:
 * DailyLimits.reserve's and giveBack's and the driver's cover them); see IdempotencyStoreRepo for the
 * measurement.
 */
import { SqlClient, SqlSchema, type Statement } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"
import { WRITE_ACTIONS, type WriteAction } from "./rules.js"

const Action = Schema.Literal(...WRITE_ACTIONS)

export interface SlotRequest {
  readonly keyId: string
  readonly action: WriteAction
  readonly defaultLimit: number
}

/**
 * The two CTEs that take one slot of today's (UTC, database clock) counter unless it reached the
 * key's limit (`defaultLimit` when the key has none): `lim` (the limit, today) and `slot` (the
 * conditional increment, the counter row locked while it is checked; no row when nothing was
 * counted). `when` is a further condition on taking it. Used by `reserve` below and by the
 * Idempotency-Key claim, which takes the slot of a new key in the same statement (IdempotencyStoreRepo).
 */
export const slotCtes = (sql: SqlClient.SqlClient, r: SlotRequest, when: Statement.Fragment) =>
  sql`lim AS (
          SELECT coalesce(
              (SELECT daily_limit FROM api_key_daily_limits WHERE key_id = ${r.keyId} AND action = ${r.action}),
              ${r.defaultLimit}::int) AS value,
            (now() AT TIME ZONE 'UTC')::date AS day
        ), slot AS (
          INSERT INTO daily_write_counters AS c (key_id, action, day, used)
          SELECT ${r.keyId}, ${r.action}, lim.day, 1 FROM lim WHERE lim.value >= 1 AND ${when}
          ON CONFLICT (key_id, action, day) DO UPDATE SET used = c.used + 1
          WHERE c.used < (SELECT value FROM lim)
          RETURNING c.used, c.day
        )`

/** Seconds from now to the next UTC midnight after `lim.day` (with `slotCtes`). */
export const resetSeconds = (sql: SqlClient.SqlClient) =>
  sql`ceil(extract(epoch FROM ((lim.day + 1)::timestamp AT TIME ZONE 'UTC') - now()))::int`

export class DailyLimitsRepo extends Effect.Service<DailyLimitsRepo>()("Partner/DailyLimitsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Takes one slot of today's (UTC, database clock) counter unless it reached the key's limit
     * (`defaultLimit` when the key has none): one conditional increment, the counter row locked while
     * it is checked. `used` is null when the limit was reached (nothing counted). On every write: see above.
     */
    const reserve = (r: SlotRequest) =>
      Effect.flatMap(
        sql<{ daily_limit: number; day: string; used: number | null; reset_seconds: number }>`
        WITH ${slotCtes(sql, r, sql`true`)}
        SELECT lim.value AS daily_limit, lim.day::text AS day, slot.used,
          ${resetSeconds(sql)} AS reset_seconds
        FROM lim LEFT JOIN slot ON true`,
        // The CTE answers one row, always.
        ([row]) =>
          row === undefined ? Effect.dieMessage("the daily limit statement answered no row") : Effect.succeed(row)
      )

    /** Gives a slot back (on every write that was refused or changed nothing: see above). */
    const giveBack = (slot: { readonly keyId: string; readonly action: WriteAction; readonly day: string }) =>
      Effect.asVoid(sql`
        UPDATE daily_write_counters SET used = used - 1
        WHERE key_id = ${slot.keyId} AND action = ${slot.action} AND day = ${slot.day}::date AND used > 0`)

    const keyExists = SqlSchema.single({
      Request: Schema.String,
      Result: Schema.Struct({ found: Schema.Boolean }),
      execute: (keyId) => sql`SELECT EXISTS (SELECT 1 FROM api_keys WHERE id = ${keyId}) AS found`
    })

    /** Every action (in WRITE_ACTIONS order) with the key's own limit, if any, and what it used today. */
    const usage = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({
        action: Action,
        daily_limit: Schema.NullOr(Schema.Number),
        used: Schema.NullOr(Schema.Number)
      }),
      execute: (keyId) =>
        sql`
            SELECT a.action, l.daily_limit, c.used
            FROM unnest(${`{${WRITE_ACTIONS.join(",")}}`}::text[]) WITH ORDINALITY AS a(action, position)
            LEFT JOIN api_key_daily_limits l ON l.key_id = ${keyId} AND l.action = a.action
            LEFT JOIN daily_write_counters c
              ON c.key_id = ${keyId} AND c.action = a.action AND c.day = (now() AT TIME ZONE 'UTC')::date
            ORDER BY a.position`
    })

    const upsertLimit = SqlSchema.void({
      Request: Schema.Struct({ keyId: Schema.String, action: Action, limit: Schema.Number }),
      execute: ({ action, keyId, limit }) =>
        sql`
          INSERT INTO api_key_daily_limits (key_id, action, daily_limit) VALUES (${keyId}, ${action}, ${limit})
          ON CONFLICT (key_id, action) DO UPDATE SET daily_limit = excluded.daily_limit, updated_at = now()`
    })

    /**
     * Today's count of one action against its limit, and the seconds to the next UTC midnight, counting
     * nothing (the assistant's first call of a write checks the room it would need).
     */
    const room = SqlSchema.single({
      Request: Schema.Struct({ keyId: Schema.String, action: Action, defaultLimit: Schema.Number }),
      Result: Schema.Struct({ daily_limit: Schema.Number, used: Schema.Number, reset_seconds: Schema.Number }),
      execute: (r) =>
        sql`
          SELECT
            coalesce(
              (SELECT daily_limit FROM api_key_daily_limits WHERE key_id = ${r.keyId} AND action = ${r.action}),
              ${r.defaultLimit}::int) AS daily_limit,
            coalesce(
              (SELECT used FROM daily_write_counters
               WHERE key_id = ${r.keyId} AND action = ${r.action} AND day = (now() AT TIME ZONE 'UTC')::date),
              0) AS used,
            ceil(extract(epoch FROM (((now() AT TIME ZONE 'UTC')::date + 1)::timestamp AT TIME ZONE 'UTC') - now()))::int
              AS reset_seconds`
    })

    /** Sets the key's own limits for these actions, in one transaction. */
    const setLimits = (keyId: string, limits: ReadonlyArray<readonly [WriteAction, number]>) =>
      sql.withTransaction(Effect.forEach(limits, ([action, limit]) => upsertLimit({ keyId, action, limit }), {
        discard: true
      }))

    /** Back to the defaults for these actions. */
    const clearLimits = SqlSchema.void({
      Request: Schema.Struct({ keyId: Schema.String, actions: Schema.Array(Action) }),
      execute: ({ actions, keyId }) =>
        sql`DELETE FROM api_key_daily_limits WHERE key_id = ${keyId} AND action IN ${sql.in(actions)}`
    })

    return {
      ...repoEdge.untraced({ reserve, giveBack }),
      ...repoEdge("DailyLimitsRepo", { keyExists, usage, room, setLimits, clearLimits })
    }
  })
}) {}
