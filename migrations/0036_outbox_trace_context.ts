import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The trace context of the request (or job) that enqueued an email, as a W3C `traceparent`
 * (`00-<trace id>-<span id>-<flags>`), so the span that sends it later links to that trace
 * (docs/observability.md). NULL when tracing was off or the message came from no span.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE email_outbox ADD COLUMN traceparent text
      CHECK (traceparent IS NULL OR traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
  `))
