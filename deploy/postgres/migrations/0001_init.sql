-- 0001: links, ID segments, aliases, de-duplication and idempotency keys.
-- Forward-only. Applied by shorten-service at start (lib/pg/migrations.cc)
-- inside one transaction under an advisory lock, recorded in
-- schema_migrations.
--
-- Distribution (docs/scaling.md): every table is keyed so that an engine like
-- Citus can shard it: links by id; link_aliases by alias; link_dedupe by
-- owner; shorten_requests by owner. No unique key spans two of those.

-- One row per ID sequence. A replica leases [next_id, next_id + step) with one
-- atomic UPDATE ... RETURNING, so two replicas can never get the same range.
CREATE TABLE id_segments (
  name       text PRIMARY KEY,
  next_id    bigint NOT NULL CHECK (next_id >= 0),
  step       integer NOT NULL CHECK (step > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO id_segments (name, next_id, step) VALUES ('links', 1, 1000);

CREATE TABLE links (
  id              bigint PRIMARY KEY,
  -- NULL for generated codes. Uniqueness lives in link_aliases (its own
  -- distribution key); this copy lets a link row say which alias it has.
  alias           text,
  long_url        text NOT NULL,
  long_url_sha256 bytea NOT NULL CHECK (octet_length(long_url_sha256) = 32),
  owner           text NOT NULL,
  redirect_status smallint NOT NULL DEFAULT 302
                  CHECK (redirect_status IN (301, 302, 307, 308)),
  create_time     timestamptz NOT NULL,
  expire_time     timestamptz,
  revoke_time     timestamptz
);

CREATE TABLE link_aliases (
  alias   text PRIMARY KEY,
  link_id bigint NOT NULL
);

-- The link returned for (owner, URL) when force_new is not set.
CREATE TABLE link_dedupe (
  owner           text NOT NULL,
  long_url_sha256 bytea NOT NULL,
  link_id         bigint NOT NULL,
  PRIMARY KEY (owner, long_url_sha256)
);

-- Idempotency keys: a retried Shorten with the same request_id gets the same
-- link; the same id with another URL is refused.
CREATE TABLE shorten_requests (
  owner           text NOT NULL,
  request_id      text NOT NULL,
  long_url_sha256 bytea NOT NULL,
  link_id         bigint NOT NULL,
  create_time     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner, request_id)
);

-- Fingerprints of the code secrets, per format version. The service refuses
-- to start with a secret whose fingerprint differs from the stored one, so a
-- lost or mistyped secret can never silently turn codes into other links.
CREATE TABLE codec_keys (
  format_version integer PRIMARY KEY,
  fingerprint    text NOT NULL,
  create_time    timestamptz NOT NULL DEFAULT now()
);
