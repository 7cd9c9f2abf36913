import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Publishable keys (`pk_widget_<id>`, src/partner/auth/publishableKey.ts): a site's public key for its
 * checkout script and catalogue widgets. Not secret, so the id is the whole key. Made by an owner or
 * admin of the site's operator, with the origins browsers may read its answers from.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE publishable_keys (
      id text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9]{24}$'),
      site_id uuid NOT NULL REFERENCES sites(id) ON DELETE CASCADE,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      -- Normalised origins (https://host[:port], or https://*.domain for its subdomains).
      allowed_origins text[] NOT NULL CHECK (cardinality(allowed_origins) BETWEEN 1 AND 50),
      created_by uuid NOT NULL REFERENCES users(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    );
    CREATE INDEX publishable_keys_by_site ON publishable_keys (site_id);
  `))
