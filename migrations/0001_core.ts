import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Operators, users and their roles, sites, tours, the service's own bookings. */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE operators (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      legal_name text,
      org_number text,
      timezone text NOT NULL DEFAULT 'Europe/Oslo',
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      email text NOT NULL UNIQUE CHECK (email = lower(email)),
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE memberships (
      operator_id uuid NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (operator_id, user_id)
    );
    CREATE INDEX memberships_by_user ON memberships (user_id);

    CREATE TABLE sites (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      domain text NOT NULL UNIQUE CHECK (domain = lower(domain)),
      name text NOT NULL,
      owner_operator_id uuid NOT NULL REFERENCES operators(id),
      created_at timestamptz NOT NULL DEFAULT now()
    );

    -- Operators added to a site they do not own (they sell their own tours there).
    CREATE TABLE site_operators (
      site_id uuid NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      operator_id uuid NOT NULL REFERENCES operators(id) ON DELETE CASCADE,
      added_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (site_id, operator_id)
    );

    CREATE TABLE tours (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      operator_id uuid NOT NULL REFERENCES operators(id),
      slug text,
      title text NOT NULL,
      status text NOT NULL CHECK (status IN ('draft', 'published', 'archived')),
      timezone text NOT NULL,
      currency char(3) NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX tours_by_operator ON tours (operator_id);

    -- Tours on sale on a site: the owner's own tours and tours it resells for other operators.
    CREATE TABLE site_tours (
      site_id uuid NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      tour_id uuid NOT NULL REFERENCES tours(id) ON DELETE CASCADE,
      position integer NOT NULL DEFAULT 0,
      PRIMARY KEY (site_id, tour_id)
    );

    -- The service's own bookings. HOLD and ABANDONED are checkout states that the API never shows;
    -- RESERVED is a live booking (shown as CONFIRMED).
    CREATE TABLE bookings (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      confirmation_code text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('HOLD', 'ABANDONED', 'RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')),
      operator_id uuid NOT NULL REFERENCES operators(id),
      tour_id uuid REFERENCES tours(id),
      tour_name text,
      site_id uuid REFERENCES sites(id),
      experience_date date,
      start_time text CHECK (start_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
      timezone text NOT NULL,
      participants integer CHECK (participants >= 0),
      amount_minor bigint NOT NULL,
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
      channel text,
      guest_name text,
      guest_email text,
      guest_phone text,
      provider_reference text,
      payment_strategy text NOT NULL CHECK (payment_strategy IN ('pay_now', 'pay_later')),
      pay_later_status text,
      pay_later_amount_minor bigint,
      pay_later_currency char(3),
      pay_later_charge_at timestamptz,
      pay_later_paid_at timestamptz,
      commission_amount_minor bigint,
      commission_rate_percent numeric(6, 3),
      commission_currency char(3),
      commission_status text,
      cancel_reason text,
      booked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz,
      CHECK ((payment_strategy = 'pay_later') = (pay_later_status IS NOT NULL AND pay_later_amount_minor IS NOT NULL))
    );
    -- Every list index is partial on the statuses the API shows, so holds never cost a read.
    CREATE INDEX bookings_list ON bookings (operator_id, created_at DESC, id DESC)
      WHERE status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED');
    CREATE INDEX bookings_by_experience_date ON bookings (operator_id, experience_date)
      WHERE status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED');
    CREATE INDEX bookings_by_change ON bookings (operator_id, (coalesce(updated_at, created_at)))
      WHERE status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED');
    CREATE INDEX bookings_by_status ON bookings (operator_id, status, created_at DESC, id DESC)
      WHERE status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED');
  `))
