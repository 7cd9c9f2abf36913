/**
 * The SQL of the sales rollups (migration 0024): which (operator, UTC day) groups changed since a
 * moment, and each group summed again from its sources. A group is always rebuilt whole (its rows
 * deleted, then inserted from the sources), so a run that repeats a group changes nothing.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { repoEdge } from "../db/repoEdge.js"

export type Rollup = "own" | "channels"

/** One (operator, UTC day) group of a rollup. */
export const Group = Schema.Struct({ operator_id: Schema.String, day: Schema.String })
export type Group = typeof Group.Type

/** The groups' operator ids and days as two parallel PostgreSQL arrays (for `unnest`). */
const arraysOf = (groups: ReadonlyArray<Group>) => ({
  operators: `{${groups.map((g) => g.operator_id).join(",")}}`,
  days: `{${groups.map((g) => g.day).join(",")}}`
})

export class SalesRollupsRepo extends Effect.Service<SalesRollupsRepo>()("Sales/SalesRollupsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The database's clock: a run's watermark is the database's time when it started. */
    const now = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ now: Schema.DateFromSelf }),
      execute: () => sql`SELECT now() AS now`
    })

    const watermark = (rollup: Rollup) =>
      Effect.map(
        SqlSchema.findOne({
          Request: Schema.String,
          Result: Schema.Struct({ watermark: Schema.DateFromSelf }),
          execute: (r) => sql`SELECT watermark FROM sales_rollup_state WHERE rollup = ${r}`
        })(rollup),
        Option.map((row) => row.watermark)
      )

    const setWatermark = (rollup: Rollup, at: Date) =>
      sql`
        INSERT INTO sales_rollup_state (rollup, watermark) VALUES (${rollup}, ${at})
        ON CONFLICT (rollup) DO UPDATE SET watermark = excluded.watermark, updated_at = now()`

    /** One rollup at a time, whichever instance or caller runs it (held until the transaction ends). */
    const lock = (rollup: Rollup) => sql`SELECT pg_advisory_xact_lock(hashtext(${`sales-rollup-${rollup}`}))`

    /** Own sales: groups of checkout bookings and desk sales changed after `since` (all of them when null). */
    const changedOwnGroups = SqlSchema.findAll({
      Request: Schema.NullOr(Schema.DateFromSelf),
      Result: Group,
      execute: (since) =>
        sql`
          SELECT operator_id, (created_at AT TIME ZONE 'UTC')::date::text AS day FROM bookings
          WHERE status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')
            ${since === null ? sql`` : sql`AND sales_changed_at > ${since}`}
          UNION
          SELECT t.operator_id, (q.confirmed_at AT TIME ZONE 'UTC')::date::text FROM quickbook_sales q
          JOIN tours t ON t.id = q.tour_id
          WHERE q.confirmed_at IS NOT NULL ${since === null ? sql`` : sql`AND q.sales_changed_at > ${since}`}`
    })

    /**
     * Other channels: groups of ledger lines changed after `since` (all of them when null), and of
     * lines the mirror saw cancelled after it (the mirror reads the coming departures every two
     * hours, so a cancellation reaches the figures before the ledger reads the line again).
     */
    const changedChannelGroups = SqlSchema.findAll({
      Request: Schema.NullOr(Schema.DateFromSelf),
      Result: Group,
      execute: (since) =>
        since === null
          ? sql`
            SELECT DISTINCT operator_id, (created_at AT TIME ZONE 'UTC')::date::text AS day FROM sales_ledger_lines`
          : sql`
            SELECT operator_id, (created_at AT TIME ZONE 'UTC')::date::text AS day FROM sales_ledger_lines
            WHERE changed_at > ${since}
            UNION
            SELECT l.operator_id, (l.created_at AT TIME ZONE 'UTC')::date::text FROM manifest_rows r
            JOIN sales_ledger_lines l ON l.account_id = r.account_id AND l.line_id = r.line_id
            WHERE r.cancelled_at > ${since}`
    })

    /**
     * The UTC day `g.day` as an instant range, for the sources' `created_at` indexes. Each group's
     * rows are read in a LATERAL subquery kept apart by `OFFSET 0`, so that PostgreSQL scans the
     * (operator, created_at) index once per group: joined plainly, it cannot estimate a range bound
     * to another row and planned a hash join over a sequential scan of every booking (or ledger
     * line) per batch, a run then costing the history, not what changed (bench/README.md, issue 13).
     */
    const dayStart = sql.literal(`(g.day::timestamp AT TIME ZONE 'UTC')`)
    const dayEnd = sql.literal(`((g.day + 1)::timestamp AT TIME ZONE 'UTC')`)

    type Table = "sales_own_daily" | "sales_channel_daily" | "sales_own_day_totals" | "sales_channel_day_totals"

    /** Deletes the rows of the groups (given as parallel arrays) from a rollup table. */
    const clear = (table: Table, operators: string, days: string) =>
      sql`
        DELETE FROM ${sql(table)} d USING unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
        WHERE d.operator_id = g.operator_id AND d.day = g.day`

    /**
     * The sales summary's read tables (migration 0028) of the groups, summed again from the wide rows
     * just rebuilt: per operator, day and currency; per operator, day, channel label and currency.
     */
    const rebuildOwnTotals = (operators: string, days: string) =>
      Effect.zipRight(
        clear("sales_own_day_totals", operators, days),
        sql`
          INSERT INTO sales_own_day_totals (operator_id, day, currency, bookings, revenue_minor)
          SELECT d.operator_id, d.day, d.currency, sum(d.bookings), sum(d.revenue_minor)
          FROM unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
          JOIN sales_own_daily d ON d.operator_id = g.operator_id AND d.day = g.day
          GROUP BY d.operator_id, d.day, d.currency`
      )
    const rebuildChannelTotals = (operators: string, days: string) =>
      Effect.zipRight(
        clear("sales_channel_day_totals", operators, days),
        sql`
          INSERT INTO sales_channel_day_totals
            (operator_id, day, channel_label, currency, bookings, participants, revenue_minor)
          SELECT d.operator_id, d.day, d.channel_label, d.currency, sum(d.bookings), sum(d.participants),
            sum(d.revenue_minor)
          FROM unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
          JOIN sales_channel_daily d ON d.operator_id = g.operator_id AND d.day = g.day
          GROUP BY d.operator_id, d.day, d.channel_label, d.currency`
      )

    const rebuildOwn = (groups: ReadonlyArray<Group>) => {
      const { days, operators } = arraysOf(groups)
      return Effect.zipRight(
        clear("sales_own_daily", operators, days),
        sql`
          INSERT INTO sales_own_daily
            (operator_id, day, source, site_id, tour_id, currency, bookings, participants, revenue_minor)
          SELECT g.operator_id, g.day, 'checkout', b.site_id, b.tour_id, b.currency, count(*),
            coalesce(sum(b.participants), 0), sum(b.amount_minor)
          FROM unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
          JOIN LATERAL (
            SELECT b.site_id, b.tour_id, b.currency, b.participants, b.amount_minor FROM bookings b
            WHERE b.operator_id = g.operator_id AND b.status IN ('RESERVED', 'CONFIRMED')
              AND b.created_at >= ${dayStart} AND b.created_at < ${dayEnd}
            OFFSET 0) b ON true
          GROUP BY g.operator_id, g.day, b.site_id, b.tour_id, b.currency
          UNION ALL
          SELECT g.operator_id, g.day, 'desk', NULL, q.tour_id, q.currency, count(*),
            sum((SELECT coalesce(sum((x->>'count')::int), 0) FROM jsonb_array_elements(q.guests) x)),
            sum(q.total_minor)
          FROM unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
          JOIN LATERAL (
            SELECT q.tour_id, q.currency, q.guests, q.total_minor FROM tours t
            JOIN quickbook_sales q ON q.tour_id = t.id AND q.status = 'confirmed'
              AND q.confirmed_at >= ${dayStart} AND q.confirmed_at < ${dayEnd}
            JOIN quickbook_keys k ON k.id = q.key_id AND k.mode = 'live'
            WHERE t.operator_id = g.operator_id
            OFFSET 0) q ON true
          GROUP BY g.operator_id, g.day, q.tour_id, q.currency`
      ).pipe(Effect.zipRight(rebuildOwnTotals(operators, days)))
    }

    /**
     * Other channels: lines cancelled neither in the ledger nor in the mirror (which may have read the
     * cancellation first), and not sold by this service (its channel, or a reference that is one of
     * our bookings' or desk sales' codes: those count in the own sales). The label is the channel's
     * title in the booking system, else what its class says.
     */
    const rebuildChannels = (groups: ReadonlyArray<Group>) => {
      const { days, operators } = arraysOf(groups)
      return Effect.zipRight(
        clear("sales_channel_daily", operators, days),
        sql`
          INSERT INTO sales_channel_daily (operator_id, day, account_id, tour_id, channel_class, channel_label, currency,
            bookings, participants, revenue_minor)
          SELECT g.operator_id, g.day, l.account_id, l.tour_id, l.channel_class,
            coalesce(nullif(btrim(l.channel_title), ''), CASE l.channel_class
              WHEN 'direct' THEN 'Direct' WHEN 'ota' THEN 'Online travel agency' WHEN 'reseller' THEN 'Reseller'
              ELSE 'Unknown channel' END),
            l.currency, count(DISTINCT l.booking_id), sum(l.participants), sum(l.total_minor)
          FROM unnest(${operators}::uuid[], ${days}::date[]) AS g(operator_id, day)
          JOIN LATERAL (
            SELECT l.* FROM sales_ledger_lines l
            WHERE l.operator_id = g.operator_id AND l.created_at >= ${dayStart} AND l.created_at < ${dayEnd}
            OFFSET 0) l ON true
          WHERE l.status <> 'CANCELLED' AND l.channel_class IS DISTINCT FROM 'service'
            AND NOT EXISTS (
              SELECT 1 FROM manifest_rows r
              WHERE r.account_id = l.account_id AND r.line_id = l.line_id AND r.status = 'CANCELLED')
            AND (l.external_reference IS NULL OR (
              NOT EXISTS (SELECT 1 FROM bookings b WHERE b.confirmation_code = l.external_reference)
              AND NOT EXISTS (SELECT 1 FROM quickbook_sales q WHERE q.reference = l.external_reference)))
          GROUP BY 1, 2, 3, 4, 5, 6, 7`
      ).pipe(Effect.zipRight(rebuildChannelTotals(operators, days)))
    }

    return repoEdge("SalesRollupsRepo", {
      now: () => Effect.map(now(undefined), (r) => r.now),
      watermark,
      setWatermark,
      lock,
      changedOwnGroups,
      changedChannelGroups,
      rebuildOwn,
      rebuildChannels
    })
  })
}) {}
