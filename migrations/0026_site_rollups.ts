import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Site analytics rollups (issue 14, Contract 2; src/analytics/AnalyticsRollups.ts, docs/decisions.md
 * "Analytics rollups"): what the analytics reads sum, so no request reads a raw event.
 *
 * Daily tables (UTC days), kept forever; every counter is additive, so a run only adds what its new
 * events (and changed bookings) bring:
 * - `analytics_site_daily`: distinct visitors and new visitors of the day, sessions (counted on the
 *   day they started), pageviews (the day of the event), bounces (sessions with exactly one
 *   pageview) and duration (sum over sessions of last event − first event, on the start day).
 * - `analytics_source_daily`: per dimension and label ('(none)' when absent), distinct visitors;
 *   conversions (sessions with a checkout_attempt whose booking code is a live booking of the site)
 *   and their revenue in EUR minor units, on the session's start day.
 * - `analytics_tour_daily`: distinct sessions per funnel step of a tour (on the session's start day).
 * Monthly tier: `analytics_site_monthly`, `analytics_source_monthly`, the sums of the closed months'
 * days (`month` = the first day), folded again whenever a day of a closed month changes.
 *
 * The rollups' own state (pruned, or small):
 * - `analytics_rollup_state`: the last event id taken in (the watermark).
 * - `analytics_seen_visitors` / `analytics_seen_steps`: insert-if-absent dedupe keys of the
 *   distinct counts (a visitor per site/day, per site/day/dimension/label; a session per tour step),
 *   pruned after two days (a visitor's hash changes every UTC day, so older keys can never match).
 * - `analytics_sessions`: each visitor's recent sessions (open ones are extended by later events),
 *   pruned two days after their last event.
 * - `analytics_attributions`: each booking code a checkout_attempt carried, with its session's start
 *   day and labels and what it counts now (live, revenue); kept, so a booking cancelled later can
 *   take its conversion back.
 * - `analytics_dirty_months`: (site, month) pairs whose days changed since they were last folded.
 * - `analytics_attribution_state`: when the attributions last looked at changed bookings.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE analytics_site_daily (
      site_id uuid NOT NULL,
      day date NOT NULL,
      visitors integer NOT NULL DEFAULT 0,
      new_visitors integer NOT NULL DEFAULT 0,
      sessions integer NOT NULL DEFAULT 0,
      pageviews integer NOT NULL DEFAULT 0,
      bounces integer NOT NULL DEFAULT 0,
      duration_seconds bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, day)
    );

    CREATE TABLE analytics_source_daily (
      site_id uuid NOT NULL,
      day date NOT NULL,
      dimension text NOT NULL CHECK (dimension IN ('channel', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign',
        'country', 'device', 'browser', 'os', 'path')),
      label text NOT NULL,
      visitors integer NOT NULL DEFAULT 0,
      conversions integer NOT NULL DEFAULT 0,
      revenue_eur_minor bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, day, dimension, label)
    );

    CREATE TABLE analytics_tour_daily (
      site_id uuid NOT NULL,
      tour_id uuid NOT NULL,
      day date NOT NULL,
      views integer NOT NULL DEFAULT 0,
      availability_checks integer NOT NULL DEFAULT 0,
      checkout_opens integer NOT NULL DEFAULT 0,
      checkout_attempts integer NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, tour_id, day)
    );
    CREATE INDEX analytics_tour_daily_by_tour ON analytics_tour_daily (tour_id, day);

    CREATE TABLE analytics_site_monthly (
      site_id uuid NOT NULL,
      month date NOT NULL CHECK (extract(day FROM month) = 1),
      visitors integer NOT NULL DEFAULT 0,
      new_visitors integer NOT NULL DEFAULT 0,
      sessions integer NOT NULL DEFAULT 0,
      pageviews integer NOT NULL DEFAULT 0,
      bounces integer NOT NULL DEFAULT 0,
      duration_seconds bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, month)
    );

    CREATE TABLE analytics_source_monthly (
      site_id uuid NOT NULL,
      month date NOT NULL CHECK (extract(day FROM month) = 1),
      dimension text NOT NULL,
      label text NOT NULL,
      visitors integer NOT NULL DEFAULT 0,
      conversions integer NOT NULL DEFAULT 0,
      revenue_eur_minor bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, month, dimension, label)
    );

    CREATE TABLE analytics_rollup_state (
      rollup text PRIMARY KEY,
      last_id bigint NOT NULL,
      updated_at timestamptz
    );

    CREATE TABLE analytics_seen_visitors (
      site_id uuid NOT NULL,
      day date NOT NULL,
      dimension text NOT NULL,
      label text NOT NULL,
      visitor text NOT NULL,
      PRIMARY KEY (site_id, day, dimension, label, visitor)
    );
    CREATE INDEX analytics_seen_visitors_by_day ON analytics_seen_visitors (day);

    CREATE TABLE analytics_seen_steps (
      site_id uuid NOT NULL,
      tour_id uuid NOT NULL,
      day date NOT NULL,
      kind text NOT NULL,
      session_id bigint NOT NULL,
      PRIMARY KEY (site_id, tour_id, day, kind, session_id)
    );
    CREATE INDEX analytics_seen_steps_by_day ON analytics_seen_steps (day);

    CREATE TABLE analytics_sessions (
      id bigint PRIMARY KEY,
      site_id uuid NOT NULL,
      visitor text NOT NULL,
      started_at timestamptz NOT NULL,
      last_at timestamptz NOT NULL,
      start_day date NOT NULL,
      pageviews integer NOT NULL,
      labels text[] NOT NULL
    );
    CREATE INDEX analytics_sessions_by_visitor ON analytics_sessions (site_id, visitor, last_at);
    CREATE INDEX analytics_sessions_by_last ON analytics_sessions (last_at);

    CREATE TABLE analytics_attributions (
      site_id uuid NOT NULL,
      booking_code text NOT NULL,
      session_id bigint NOT NULL,
      start_day date NOT NULL,
      labels text[] NOT NULL,
      checked boolean NOT NULL DEFAULT false,
      live boolean NOT NULL DEFAULT false,
      revenue_eur_minor bigint NOT NULL DEFAULT 0,
      rate_missing boolean NOT NULL DEFAULT false,
      PRIMARY KEY (site_id, booking_code)
    );
    CREATE INDEX analytics_attributions_by_session ON analytics_attributions (session_id);
    CREATE INDEX analytics_attributions_by_code ON analytics_attributions (booking_code);
    CREATE INDEX analytics_attributions_to_check ON analytics_attributions (site_id) WHERE NOT checked OR rate_missing;

    CREATE TABLE analytics_dirty_months (
      site_id uuid NOT NULL,
      month date NOT NULL,
      PRIMARY KEY (site_id, month)
    );

    CREATE TABLE analytics_attribution_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      changed_at timestamptz NOT NULL
    );
  `))
