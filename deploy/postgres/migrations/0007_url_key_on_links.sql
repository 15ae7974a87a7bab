-- 0007: the dedupe key moves onto the link it names (issue 2, item 8:
-- BatchShorten throughput). Forward-only; applied like 0001.
--
-- links.url_key is the DedupeKey of 0006 (first 8 bytes of
-- SHA-256(owner || 0x00 || long_url_sha256)), set on the one link that (owner,
-- URL) de-duplicates to and NULL on every other link: links made with
-- force_new, an alias or a click budget, links whose key another URL holds (a
-- 64-bit collision) and former targets that expired or were revoked (the
-- link that replaces one takes the key over in the transaction that creates
-- it, lib/store/pg/queries.h: kReleaseDedupeKeys). The unique index is what
-- arbitrates between concurrent creators of the same (owner, URL), as
-- link_dedupe_keys' primary key did.
--
-- Why: a separate link_dedupe_keys row per link cost PostgreSQL a heap insert,
-- its WAL and a second statement per batch: 7.0 -> 6.1 µs of PostgreSQL CPU per
-- BatchShorten link, 140 -> 151 k links/s (docs/benchmarks.md). The price is
-- the sharding layout: a unique key on links other than id cannot be enforced
-- by Citus across shards (docs/scaling.md).
ALTER TABLE links ADD COLUMN url_key bigint;

-- Existing targets carry over. A link named by two keys cannot come from the
-- service (a link's key is a function of its own owner and URL); were one
-- there, its lowest key is kept.
UPDATE links l SET url_key = d.url_key
FROM (SELECT DISTINCT ON (link_id) link_id, url_key
      FROM link_dedupe_keys ORDER BY link_id, url_key) AS d
WHERE l.id = d.link_id;

-- Partial: links without a key (force_new, aliases, ...) add no entry.
-- Writers name it in ON CONFLICT (url_key) WHERE url_key IS NOT NULL.
CREATE UNIQUE INDEX links_url_key ON links (url_key) WHERE url_key IS NOT NULL;

-- link_dedupe_keys stays, as link_dedupe did in 0006: replicas still running
-- the previous binary during a rolling upgrade keep writing it instead of
-- failing (until they are replaced, links they create and links the new
-- binary creates do not de-duplicate against each other). New binaries
-- neither read nor write it; a later migration drops it with link_dedupe.
COMMENT ON TABLE link_dedupe_keys IS
  'unused since migration 0007 (see links.url_key); kept for rolling upgrades';
