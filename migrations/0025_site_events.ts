import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Site analytics events (issue 14, docs/api/collect.md, docs/api/privacy.md), written by the collector
 * (src/analytics/collect/) in batches, read only by the rollups.
 *
 * - `site_events`: append-only, partitioned by month on `at` (the server's receive time). Partitions are
 *   named `site_events_yYYYYmMM`; the collector makes the month it writes to when missing and the salt
 *   job (src/jobs/analyticsSalts.ts) makes next month's ahead and drops months past the 35 days raw
 *   events are kept. `id` comes from a plain sequence (not IDENTITY: PostgreSQL 15 too), so the
 *   rollups can keep a watermark on it. `visitor` is HMAC-SHA256(salt of the UTC day of `at`,
 *   site_id|ip|user agent) in hex: neither the address nor the user agent is stored.
 * - `site_salts`: one random salt per UTC day; only today's and yesterday's are kept (deleted after
 *   48 hours, so a visitor hash cannot be recomputed afterwards).
 *
 * The partitions of this month and the next are made here, so a fresh database takes events at once.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE SEQUENCE site_events_id_seq;
    CREATE TABLE site_events (
      id bigint NOT NULL DEFAULT nextval('site_events_id_seq'),
      at timestamptz NOT NULL,
      site_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('pageview', 'tour_view', 'availability_check', 'checkout_open', 'checkout_attempt')),
      visitor text NOT NULL,
      new_visitor boolean NOT NULL,
      tour_id uuid,
      path text NOT NULL,
      referrer_host text,
      channel text NOT NULL,
      utm_source text,
      utm_medium text,
      utm_campaign text,
      country char(2),
      device text NOT NULL CHECK (device IN ('desktop', 'mobile', 'tablet')),
      browser text NOT NULL,
      os text NOT NULL,
      booking_code text,
      PRIMARY KEY (id, at)
    ) PARTITION BY RANGE (at);
    ALTER SEQUENCE site_events_id_seq OWNED BY site_events.id;
    CREATE INDEX site_events_by_id ON site_events (id);

    CREATE TABLE site_salts (
      day date PRIMARY KEY,
      salt bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    DO $$
    DECLARE
      m date;
    BEGIN
      FOR i IN 0..1 LOOP
        m := (date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => i))::date;
        EXECUTE format(
          'CREATE TABLE IF NOT EXISTS %I PARTITION OF site_events FOR VALUES FROM (%L) TO (%L)',
          'site_events_y' || to_char(m, 'YYYY') || 'm' || to_char(m, 'MM'),
          m::text || ' 00:00:00+00',
          (m + interval '1 month')::date::text || ' 00:00:00+00'
        );
      END LOOP;
    END $$;
  `))
