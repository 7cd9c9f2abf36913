import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The assistant-facing MCP server's authorization server (issue 16; src/assistant/oauth/,
 * docs/assistant.md "Signing in").
 *
 * `users.password_hash`: the operators' people sign in with email and password (scrypt, set with
 * `npm run cli -- assistant set-password`); NULL means the person cannot sign in.
 *
 * `api_keys.kind`: a connection (the grant a person gives one MCP client) is backed by an `api_keys`
 * row of kind `assistant` (a random, unusable `secret_hash`), so the REST machinery (operators picked
 * where the creator is still owner/admin, rate limits, daily limits, audit) applies to it unchanged.
 *
 * `oauth_store`: what oidc-provider keeps (clients, grants, sessions, interactions, codes, tokens),
 * keyed by the SHA-256 of the id: a token, code or session id is never stored, only its hash. The
 * payload is kept without its id (`jti`). `grant_id` lets a grant's tokens be revoked together.
 *
 * `assistant_connections`: a connection's grant, person and client (the `api_keys` row is the key).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    ALTER TABLE users ADD COLUMN password_hash text;

    ALTER TABLE api_keys ADD COLUMN kind text NOT NULL DEFAULT 'secret'
      CHECK (kind IN ('secret', 'assistant'));

    CREATE TABLE oauth_store (
      model text NOT NULL,
      id_hash bytea NOT NULL,
      payload jsonb NOT NULL,
      grant_id text,
      uid_hash bytea,
      user_code_hash bytea,
      expires_at timestamptz,
      consumed_at timestamptz,
      PRIMARY KEY (model, id_hash)
    );
    CREATE INDEX oauth_store_by_grant ON oauth_store (grant_id) WHERE grant_id IS NOT NULL;
    CREATE INDEX oauth_store_by_uid ON oauth_store (uid_hash) WHERE uid_hash IS NOT NULL;
    CREATE INDEX oauth_store_by_user_code ON oauth_store (user_code_hash) WHERE user_code_hash IS NOT NULL;
    CREATE INDEX oauth_store_by_expiry ON oauth_store (expires_at) WHERE expires_at IS NOT NULL;

    CREATE TABLE assistant_connections (
      key_id text PRIMARY KEY REFERENCES api_keys(id) ON DELETE CASCADE,
      grant_id text NOT NULL UNIQUE,
      user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      client_id text NOT NULL,
      client_name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX assistant_connections_by_user ON assistant_connections (user_id);

    INSERT INTO service_secrets (name, value) VALUES (
      'oauth_cookies',
      decode(replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', ''), 'hex')
    ) ON CONFLICT (name) DO NOTHING;
  `))
