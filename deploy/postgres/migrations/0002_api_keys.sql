-- 0002: API keys (issue 4). Forward-only; applied like 0001.
--
-- A key is stored only as its SHA-256 (lib/auth/api_key.h, HashApiKey: 64
-- lowercase hex characters); there is deliberately no column that could hold
-- the key itself. Lookups go by key_hash (unique index).
CREATE TABLE api_keys (
  id              bigserial PRIMARY KEY,
  key_hash        text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
  name            text NOT NULL CHECK (name <> ''),
  -- Canonical ScopeSet::ToString(): sorted scope names, comma-separated.
  scopes          text NOT NULL,
  -- Normalised DomainAllowlist entries; empty: every domain allowed.
  allowed_domains text[] NOT NULL DEFAULT '{}',
  -- Token bucket; both NULL: no rate limit.
  rate_per_second double precision CHECK (rate_per_second > 0),
  burst           integer CHECK (burst > 0),
  create_time     timestamptz NOT NULL DEFAULT now(),
  revoke_time     timestamptz
);
