import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A scheduled run claims its slot (job, scheduled time): the cluster delivers a cron run at least
 * once, and a second delivery of the same slot (seen while an instance joins and shards move) is
 * counted instead of run again.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE job_runs ADD COLUMN scheduled_for timestamptz;
    ALTER TABLE job_runs ADD COLUMN duplicate_deliveries integer NOT NULL DEFAULT 0;
    CREATE UNIQUE INDEX job_runs_slot ON job_runs (job, scheduled_for) WHERE scheduled_for IS NOT NULL;
  `))
