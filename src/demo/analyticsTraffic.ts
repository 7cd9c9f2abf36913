/**
 * Demo site traffic (issue 14): partitions of `site_events` for the days the demo writes.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const DAY = /^\d{4}-\d{2}-\d{2}$/
/** What PostgreSQL answers when a month is already covered: the same name, an overlap, a default partition's rows. */
const COVERED = new Set(["42P07", "42P17", "23514"])

/**
 * Creates the monthly partitions of `site_events` covering [from, to] (ISO days) that no partition
 * covers yet: a month some other partition already covers (the collection's salt job names its own)
 * is left as it is.
 */
export const ensureEventPartitions = (from: string, to: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    if (!DAY.test(from) || !DAY.test(to)) return yield* Effect.dieMessage(`not ISO days: ${from}, ${to}`)
    const first = new Date(`${from.slice(0, 7)}-01T00:00:00Z`)
    const last = new Date(`${to.slice(0, 7)}-01T00:00:00Z`)
    // The ranges the partitions cover (read first: creating one locks the table against writers).
    const covered = yield* sql<{ from_at: Date; to_at: Date }>`
      SELECT substring(b FROM 'FROM [(]''([^'']+)''[)]')::timestamptz AS from_at,
        substring(b FROM 'TO [(]''([^'']+)''[)]')::timestamptz AS to_at
      FROM (SELECT pg_get_expr(c.relpartbound, c.oid) AS b FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'site_events'::regclass) p
      WHERE b LIKE 'FOR VALUES FROM%'`
    for (let m = first; m <= last; m = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1))) {
      const next = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1))
      if (covered.some((c) => c.from_at <= m && c.to_at >= next)) continue
      const name = `site_events_${m.toISOString().slice(0, 7).replace("-", "_")}`
      // Identifiers and bounds built from validated dates only (DDL takes no parameters).
      yield* sql.unsafe(
        `CREATE TABLE ${name} PARTITION OF site_events FOR VALUES FROM ('${m.toISOString()}') TO ('${next.toISOString()}')`
      ).pipe(
        Effect.catchIf((e) => COVERED.has(String((e.cause as { code?: unknown } | undefined)?.code)), () => Effect.void)
      )
    }
  }).pipe(Effect.orDie)
