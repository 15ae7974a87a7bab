-- 0006: the dedupe key becomes one bigint (issue 2, item 8: Shorten
-- throughput). Forward-only; applied like 0001.
--
-- url_key is the first 8 bytes, big-endian and signed, of
-- SHA-256(owner || 0x00 || long_url_sha256); lib/store/create_planner.cc
-- (DedupeKey) computes the same. One bigint instead of (owner text,
-- 32-byte bytea) makes the index about a third of the size and an insert
-- about half the cost (docs/benchmarks.md). Two (owner, URL) pairs can share
-- a key (about 1 in 10^9 at 10^10 links); the service then checks the
-- owner and URL hash of the link the key names and never returns another
-- URL's link: the newcomer is created without dedupe.
--
-- Distribution (docs/scaling.md): by url_key.
CREATE TABLE link_dedupe_keys (
  url_key bigint PRIMARY KEY,
  link_id bigint NOT NULL
);

-- Existing dedupe targets carry over. On a collision between two of them the
-- lower url_key/link_id pair wins and the other URL stops deduplicating.
INSERT INTO link_dedupe_keys (url_key, link_id)
SELECT k.url_key, k.link_id
FROM (SELECT ('x' || encode(substr(sha256(convert_to(d.owner, 'UTF8') || '\x00'::bytea
                                          || d.long_url_sha256), 1, 8), 'hex'))::bit(64)::bigint
               AS url_key,
             d.link_id
      FROM link_dedupe d) AS k
ORDER BY k.url_key, k.link_id
ON CONFLICT (url_key) DO NOTHING;

-- link_dedupe stays for now: replicas still running the previous binary
-- during a rolling upgrade keep writing it instead of failing. New binaries
-- neither read nor write it; a later migration drops it.
COMMENT ON TABLE link_dedupe IS
  'unused since migration 0006 (see link_dedupe_keys); kept for rolling upgrades';
