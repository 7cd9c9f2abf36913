import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Site events and their daily salts (issue 14, Contract 1; owned by the collection, src/analytics/collect).
 *
 * NOTE (i14-rollups): a copy of Contract 1's shape, only so the rollups' tests and demo run before the
 * collection's migration is merged; the lead keeps the collection's own 0025 (which also creates the
 * monthly partitions ahead). Nothing here differs from the contract.
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
      device text NOT NULL,
      browser text NOT NULL,
      os text NOT NULL,
      booking_code text,
      PRIMARY KEY (id, at)
    ) PARTITION BY RANGE (at);
    CREATE INDEX site_events_by_id ON site_events (id);

    CREATE TABLE site_salts (
      day date PRIMARY KEY,
      salt bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `))
