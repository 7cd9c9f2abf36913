/**
 * The sandbox's own tables, in schema `bokun_sandbox`: a separate system that shares only the
 * PostgreSQL server with the service (never part of the service's migrations). Created at start,
 * idempotently, under an advisory lock so that two sandboxes starting on one database do not race.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

const DDL = `
  CREATE SCHEMA IF NOT EXISTS bokun_sandbox;
  CREATE SEQUENCE IF NOT EXISTS bokun_sandbox.ids START WITH 1000;
  CREATE SEQUENCE IF NOT EXISTS bokun_sandbox.booking_ids START WITH 100000;

  CREATE TABLE IF NOT EXISTS bokun_sandbox.vendors (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    title text NOT NULL,
    code_prefix text NOT NULL,
    access_key text NOT NULL UNIQUE,
    secret_key text NOT NULL,
    timezone text NOT NULL,
    currency text NOT NULL,
    hold_seconds integer NOT NULL DEFAULT 1800 CHECK (hold_seconds > 0)
  );

  -- Sales channels. class says how the seeder uses it; the API shows only id and title.
  CREATE TABLE IF NOT EXISTS bokun_sandbox.channels (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    vendor_id bigint NOT NULL REFERENCES bokun_sandbox.vendors(id) ON DELETE CASCADE,
    title text NOT NULL,
    class text NOT NULL CHECK (class IN ('service', 'ota', 'direct', 'reseller')),
    weight integer NOT NULL DEFAULT 1 CHECK (weight >= 0)
  );
  -- The channel the vendor's API key books through.
  CREATE UNIQUE INDEX IF NOT EXISTS channels_one_service ON bokun_sandbox.channels (vendor_id) WHERE class = 'service';

  CREATE TABLE IF NOT EXISTS bokun_sandbox.products (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    vendor_id bigint NOT NULL REFERENCES bokun_sandbox.vendors(id) ON DELETE CASCADE,
    title text NOT NULL,
    timezone text NOT NULL,
    currency text NOT NULL,
    duration_minutes integer,
    priced_per_booking boolean NOT NULL DEFAULT false,
    supports_holds boolean NOT NULL DEFAULT true,
    -- Seats per departure; NULL: unlimited.
    capacity integer CHECK (capacity >= 0),
    rating_average numeric(3, 2),
    rating_count integer
  );
  -- A seasonal product departs only from season_from to season_to (either may be open).
  ALTER TABLE bokun_sandbox.products
    ADD COLUMN IF NOT EXISTS season_from date,
    ADD COLUMN IF NOT EXISTS season_to date;
  CREATE TABLE IF NOT EXISTS bokun_sandbox.start_times (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    time text NOT NULL CHECK (time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    UNIQUE (product_id, time)
  );
  CREATE TABLE IF NOT EXISTS bokun_sandbox.rates (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    title text NOT NULL,
    description text,
    position integer NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS bokun_sandbox.pricing_categories (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    title text NOT NULL,
    is_default boolean NOT NULL DEFAULT false,
    min_age integer,
    max_age integer,
    position integer NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS bokun_sandbox.prices (
    rate_id bigint NOT NULL REFERENCES bokun_sandbox.rates(id) ON DELETE CASCADE,
    pricing_category_id bigint NOT NULL REFERENCES bokun_sandbox.pricing_categories(id) ON DELETE CASCADE,
    amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
    PRIMARY KEY (rate_id, pricing_category_id)
  );
  -- The price of one day when it differs from the rate's (a seasonal or peak-day price).
  CREATE TABLE IF NOT EXISTS bokun_sandbox.day_prices (
    rate_id bigint NOT NULL REFERENCES bokun_sandbox.rates(id) ON DELETE CASCADE,
    pricing_category_id bigint NOT NULL REFERENCES bokun_sandbox.pricing_categories(id) ON DELETE CASCADE,
    date date NOT NULL,
    amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
    PRIMARY KEY (rate_id, pricing_category_id, date)
  );
  CREATE TABLE IF NOT EXISTS bokun_sandbox.pickup_places (
    id bigint PRIMARY KEY DEFAULT nextval('bokun_sandbox.ids'),
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    title text NOT NULL,
    minutes_before integer NOT NULL DEFAULT 30
  );
  -- Capacity of one departure when it differs from the product's.
  CREATE TABLE IF NOT EXISTS bokun_sandbox.departures (
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    start_time_id bigint NOT NULL REFERENCES bokun_sandbox.start_times(id) ON DELETE CASCADE,
    date date NOT NULL,
    capacity integer NOT NULL CHECK (capacity >= 0),
    PRIMARY KEY (product_id, start_time_id, date)
  );

  CREATE TABLE IF NOT EXISTS bokun_sandbox.bookings (
    id bigint PRIMARY KEY,
    vendor_id bigint NOT NULL REFERENCES bokun_sandbox.vendors(id) ON DELETE CASCADE,
    confirmation_code text NOT NULL UNIQUE,
    external_reference text,
    status text NOT NULL,
    channel_id bigint REFERENCES bokun_sandbox.channels(id),
    currency text NOT NULL,
    first_name text,
    last_name text,
    email text,
    phone text,
    paid_minor bigint NOT NULL DEFAULT 0,
    payment_status text,
    idempotency_key text,
    hold_expires_at timestamptz,
    note text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (vendor_id, idempotency_key)
  );
  CREATE TABLE IF NOT EXISTS bokun_sandbox.product_bookings (
    id bigint PRIMARY KEY,
    booking_id bigint NOT NULL REFERENCES bokun_sandbox.bookings(id) ON DELETE CASCADE,
    vendor_id bigint NOT NULL,
    product_id bigint NOT NULL REFERENCES bokun_sandbox.products(id) ON DELETE CASCADE,
    rate_id bigint REFERENCES bokun_sandbox.rates(id),
    start_time_id bigint REFERENCES bokun_sandbox.start_times(id),
    date date NOT NULL,
    status text NOT NULL,
    participants integer NOT NULL CHECK (participants >= 0),
    -- [{"pricingCategoryId": 1, "title": "Adult", "quantity": 2}]
    pax jsonb NOT NULL,
    pickup_place_id bigint REFERENCES bokun_sandbox.pickup_places(id),
    total_minor bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL
  );
  -- The payment taken outside Bókun that a confirmation (or a one-step checkout) carried: its transaction id.
  ALTER TABLE bokun_sandbox.bookings ADD COLUMN IF NOT EXISTS payment_reference text;
  CREATE INDEX IF NOT EXISTS product_bookings_by_vendor_day ON bokun_sandbox.product_bookings (vendor_id, date, booking_id);
  CREATE INDEX IF NOT EXISTS product_bookings_by_booking ON bokun_sandbox.product_bookings (booking_id);
  CREATE INDEX IF NOT EXISTS product_bookings_by_departure ON bokun_sandbox.product_bookings (product_id, date, start_time_id)
    WHERE status IN ('CONFIRMED', 'RESERVED');
  -- The booking search by creation (creationDateRange).
  CREATE INDEX IF NOT EXISTS bookings_by_vendor_created ON bokun_sandbox.bookings (vendor_id, created_at, id);
  CREATE INDEX IF NOT EXISTS bookings_reserved ON bokun_sandbox.bookings (hold_expires_at) WHERE status = 'RESERVED';
`

export const createSandboxSchema = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.withTransaction(
    Effect.zipRight(
      sql`SELECT pg_advisory_xact_lock(hashtext('bokun_sandbox.schema'))`,
      sql.unsafe(DDL)
    )
  )).pipe(Effect.asVoid, Effect.withSpan("BokunSandbox.createSchema"))
