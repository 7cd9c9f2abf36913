import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The tour catalogue (spec §2 "Tour"; src/partner/tours/Tours.ts, docs/api/tours.md).
 *
 * - `tours` gains the English content and facts: excerpt, duration, priced per booking, guide
 *   languages (ISO 639-1), the booking system's rating (stored), meeting point, cancellation,
 *   minimum age, difficulty (Bókun's levels in lower case), usual departure times (local HH:MM),
 *   the rich text (`*_html`, cleaned on every read, never trusted as stored) and the plain-text lists.
 * - Child tables, ordered by `position`: photos (the lowest position is the cover), pricing
 *   categories (at most one default), rates, linked products (optionally pointing at another tour).
 * - Translations per locale (ISO 639-1, never `en`: English lives on the tour itself). A tour's
 *   translation row holds the translated title and, where not null, the other translated fields;
 *   pricing-category and rate texts translate per row and need the tour's translation row.
 * - `site_tours.sold_by`: who is the seller of record of a tour on a site, the tour's operator
 *   (default) or the site's owner reselling it.
 * - `tour_season_cache`: `from_price` and `season` as a job computes them from the booking system;
 *   no row yet reads as price unknown and season not known (never "closed").
 * - Indexes for "the sites of these operators".
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE tours
      ADD COLUMN excerpt text,
      ADD COLUMN duration_minutes integer CHECK (duration_minutes > 0),
      ADD COLUMN priced_per_booking boolean NOT NULL DEFAULT false,
      ADD COLUMN languages text[] NOT NULL DEFAULT '{}'
        CHECK (array_position(languages, NULL) IS NULL AND array_to_string(languages, ',') ~ '^([a-z]{2}(,[a-z]{2})*)?$'),
      ADD COLUMN rating_average numeric(3, 2) CHECK (rating_average BETWEEN 0 AND 5),
      ADD COLUMN rating_count integer CHECK (rating_count >= 0),
      ADD COLUMN meeting_point_name text,
      ADD COLUMN meeting_point_address text,
      ADD COLUMN meeting_point_lat double precision CHECK (meeting_point_lat BETWEEN -90 AND 90),
      ADD COLUMN meeting_point_lng double precision CHECK (meeting_point_lng BETWEEN -180 AND 180),
      ADD COLUMN cancellation_title text,
      ADD COLUMN cancellation_free_hours integer CHECK (cancellation_free_hours >= 0),
      ADD COLUMN min_age integer CHECK (min_age BETWEEN 0 AND 120),
      ADD COLUMN difficulty text
        CHECK (difficulty IN ('very_easy', 'easy', 'moderate', 'challenging', 'demanding', 'extreme')),
      ADD COLUMN departure_times text[] NOT NULL DEFAULT '{}'
        CHECK (array_position(departure_times, NULL) IS NULL
          AND array_to_string(departure_times, ',') ~ '^(([01][0-9]|2[0-3]):[0-5][0-9](,([01][0-9]|2[0-3]):[0-5][0-9])*)?$'),
      ADD COLUMN description_html text NOT NULL DEFAULT '',
      ADD COLUMN included_html text NOT NULL DEFAULT '',
      ADD COLUMN excluded_html text NOT NULL DEFAULT '',
      ADD COLUMN inclusions text[] NOT NULL DEFAULT '{}' CHECK (array_position(inclusions, NULL) IS NULL),
      ADD COLUMN exclusions text[] NOT NULL DEFAULT '{}' CHECK (array_position(exclusions, NULL) IS NULL),
      ADD COLUMN highlights text[] NOT NULL DEFAULT '{}' CHECK (array_position(highlights, NULL) IS NULL),
      ADD COLUMN know_before text[] NOT NULL DEFAULT '{}' CHECK (array_position(know_before, NULL) IS NULL),
      ADD CONSTRAINT tours_rating_pair CHECK ((rating_average IS NULL) = (rating_count IS NULL)),
      ADD CONSTRAINT tours_meeting_point_coordinates CHECK ((meeting_point_lat IS NULL) = (meeting_point_lng IS NULL)),
      ADD CONSTRAINT tours_meeting_point_named
        CHECK (meeting_point_name IS NOT NULL OR (meeting_point_address IS NULL AND meeting_point_lat IS NULL));

    CREATE TABLE tour_photos (
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      position integer NOT NULL CHECK (position >= 0),
      url text NOT NULL CHECK (url ~ '^https?://[^[:space:]]+$' AND length(url) <= 2000),
      PRIMARY KEY (tour_id, position)
    );

    -- Ids are the booking system's where the tour is linked to one (what its checkout books with).
    CREATE TABLE tour_pricing_categories (
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      id text NOT NULL CHECK (length(id) BETWEEN 1 AND 100),
      position integer NOT NULL DEFAULT 0,
      title text NOT NULL,
      is_default boolean NOT NULL DEFAULT false,
      min_age integer CHECK (min_age BETWEEN 0 AND 120),
      max_age integer CHECK (max_age BETWEEN 0 AND 120),
      CHECK (min_age IS NULL OR max_age IS NULL OR min_age <= max_age),
      PRIMARY KEY (tour_id, id)
    );
    CREATE UNIQUE INDEX tour_pricing_categories_one_default ON tour_pricing_categories (tour_id) WHERE is_default;

    CREATE TABLE tour_rates (
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      id text NOT NULL CHECK (length(id) BETWEEN 1 AND 100),
      position integer NOT NULL DEFAULT 0,
      title text NOT NULL,
      description text,
      PRIMARY KEY (tour_id, id)
    );

    CREATE TABLE tour_linked_products (
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      position integer NOT NULL CHECK (position >= 0),
      label text NOT NULL CHECK (length(label) BETWEEN 1 AND 200),
      language text CHECK (language ~ '^[a-z]{2}$'),
      linked_tour_id uuid REFERENCES tours(id) ON DELETE SET NULL,
      PRIMARY KEY (tour_id, position)
    );
    CREATE INDEX tour_linked_products_by_linked ON tour_linked_products (linked_tour_id);

    CREATE TABLE tour_translations (
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      locale text NOT NULL CHECK (locale ~ '^[a-z]{2}$' AND locale <> 'en'),
      title text NOT NULL,
      excerpt text,
      description_html text,
      included_html text,
      excluded_html text,
      inclusions text[] CHECK (array_position(inclusions, NULL) IS NULL),
      exclusions text[] CHECK (array_position(exclusions, NULL) IS NULL),
      highlights text[] CHECK (array_position(highlights, NULL) IS NULL),
      know_before text[] CHECK (array_position(know_before, NULL) IS NULL),
      meeting_point_name text,
      cancellation_title text,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tour_id, locale)
    );

    CREATE TABLE tour_pricing_category_translations (
      tour_id uuid NOT NULL,
      category_id text NOT NULL,
      locale text NOT NULL,
      title text NOT NULL,
      PRIMARY KEY (tour_id, category_id, locale),
      FOREIGN KEY (tour_id, category_id) REFERENCES tour_pricing_categories (tour_id, id)
        ON DELETE CASCADE ON UPDATE CASCADE,
      FOREIGN KEY (tour_id, locale) REFERENCES tour_translations (tour_id, locale) ON DELETE CASCADE
    );

    CREATE TABLE tour_rate_translations (
      tour_id uuid NOT NULL,
      rate_id text NOT NULL,
      locale text NOT NULL,
      title text NOT NULL,
      description text,
      PRIMARY KEY (tour_id, rate_id, locale),
      FOREIGN KEY (tour_id, rate_id) REFERENCES tour_rates (tour_id, id) ON DELETE CASCADE ON UPDATE CASCADE,
      FOREIGN KEY (tour_id, locale) REFERENCES tour_translations (tour_id, locale) ON DELETE CASCADE
    );

    ALTER TABLE site_tours
      ADD COLUMN sold_by text NOT NULL DEFAULT 'operator' CHECK (sold_by IN ('operator', 'site_owner'));

    CREATE TABLE tour_season_cache (
      tour_id uuid PRIMARY KEY REFERENCES tours(id) ON DELETE CASCADE,
      from_price_minor bigint CHECK (from_price_minor >= 0),
      from_price_currency char(3) CHECK (from_price_currency ~ '^[A-Z]{3}$'),
      known boolean NOT NULL,
      next_available_date date,
      computed_at timestamptz NOT NULL,
      CHECK ((from_price_minor IS NULL) = (from_price_currency IS NULL)),
      CHECK (known OR next_available_date IS NULL)
    );

    CREATE INDEX sites_by_owner ON sites (owner_operator_id);
    CREATE INDEX site_operators_by_operator ON site_operators (operator_id);
    CREATE INDEX site_tours_by_tour ON site_tours (tour_id);
  `))
