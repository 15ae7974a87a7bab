-- 0009: click rollups (issue 19, item 1). Forward-only; applied like 0001.
--
-- GetClickStats reads these instead of scanning visits. docs/analytics.md,
-- "Rollups", describes them; lib/clicks/rollups.h has the rules.
--
-- Every table is keyed by a subject: kind 'l' with a link id (campaign
-- labels will add their own kind, with the same tables). Dimensions are
-- numbered (1 browser, 2 os, 3 device, 4 country, 5 region, 6 city,
-- 7 network, 8 referrer host); value '' is the "other" row of values first
-- seen after the bucket already held its limit (256 per hour, 6144 per day).
--
-- Needs the hll extension (Debian's postgresql-15-hll), which only a
-- superuser can create: a deployment whose migrating role is not one
-- creates it first (docs/operations.md).
CREATE EXTENSION IF NOT EXISTS hll;

-- What each recorded batch adds, one row per subject and hour, written in
-- the batch's transaction (so exactly once, like click_counts), append-only.
-- A merge (every second, any replica, one at a time) moves these rows into
-- the hourly tables; reads add the rows not merged yet. visitors: the
-- sketch hashes (lib/clicks/rollups.h VisitorHash) of the batch's distinct
-- human visitors; dims, dim_values, dim_human, dim_bot: parallel arrays, one
-- element per dimension and value.
CREATE TABLE click_rollup_pending (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind       "char" NOT NULL,
  subject    bigint NOT NULL,
  hour       timestamptz NOT NULL,
  human      bigint NOT NULL,
  bot        bigint NOT NULL,
  visitors   bigint[] NOT NULL,
  dims       smallint[] NOT NULL,
  dim_values text[] NOT NULL,
  dim_human  bigint[] NOT NULL,
  dim_bot    bigint[] NOT NULL
);
CREATE INDEX click_rollup_pending_subject ON click_rollup_pending (kind, subject, hour);

-- Per subject and UTC hour: clicks and the sketch of the human visitors
-- (hll, log2m 12, regwidth 5, expthresh 0: registers only, never the
-- visitors' hashes). Rows up to ~2.6 KB: kept in the row, not TOASTed, as
-- the merge rewrites them.
CREATE TABLE click_rollup_hours (
  kind     "char" NOT NULL,
  subject  bigint NOT NULL,
  hour     timestamptz NOT NULL,
  human    bigint NOT NULL CHECK (human >= 0),
  bot      bigint NOT NULL CHECK (bot >= 0),
  visitors hll NOT NULL,
  PRIMARY KEY (kind, subject, hour)
) WITH (toast_tuple_target = 8160);
-- The fold finds the oldest hours.
CREATE INDEX click_rollup_hours_hour ON click_rollup_hours (hour);

-- The same per UTC day, for hours folded after the hourly retention.
CREATE TABLE click_rollup_days (
  kind     "char" NOT NULL,
  subject  bigint NOT NULL,
  day      timestamptz NOT NULL,
  human    bigint NOT NULL CHECK (human >= 0),
  bot      bigint NOT NULL CHECK (bot >= 0),
  visitors hll NOT NULL,
  PRIMARY KEY (kind, subject, day)
) WITH (toast_tuple_target = 8160);

-- Human and bot clicks per subject, hour, dimension and value.
CREATE TABLE click_rollup_hour_dims (
  kind    "char" NOT NULL,
  subject bigint NOT NULL,
  hour    timestamptz NOT NULL,
  dim     smallint NOT NULL,
  value   text NOT NULL,
  human   bigint NOT NULL CHECK (human >= 0),
  bot     bigint NOT NULL CHECK (bot >= 0),
  PRIMARY KEY (kind, subject, hour, dim, value)
);
CREATE INDEX click_rollup_hour_dims_hour ON click_rollup_hour_dims (hour);

CREATE TABLE click_rollup_day_dims (
  kind    "char" NOT NULL,
  subject bigint NOT NULL,
  day     timestamptz NOT NULL,
  dim     smallint NOT NULL,
  value   text NOT NULL,
  human   bigint NOT NULL CHECK (human >= 0),
  bot     bigint NOT NULL CHECK (bot >= 0),
  PRIMARY KEY (kind, subject, day, dim, value)
);

-- Backfill of what was recorded before this migration: clicks from
-- click_counts (all of them), sketches and dimensions from the visits still
-- kept (retention), per link and hour. A value beyond the hour's 256 with
-- the most clicks goes to the "other" row. The fold moves hours past the
-- hourly retention into days on its first run.
INSERT INTO click_rollup_hours (kind, subject, hour, human, bot, visitors)
SELECT 'l', c.link_id, c.hour,
       coalesce(sum(c.count) FILTER (WHERE NOT c.bot), 0),
       coalesce(sum(c.count) FILTER (WHERE c.bot), 0), hll_empty(12, 5, 0, 1)
  FROM click_counts c GROUP BY c.link_id, c.hour;

UPDATE click_rollup_hours r SET visitors = v.sketch
  FROM (SELECT link_id, date_trunc('hour', time, 'UTC') AS hour,
               hll_add_agg(('x' || substr(client_id, 1, 16))::bit(64)::bigint::hll_hashval,
                           12, 5, 0, 1) AS sketch
          FROM visits WHERE NOT bot AND client_id ~ '^[0-9a-f]{32}$'
         GROUP BY 1, 2) v
 WHERE r.kind = 'l' AND r.subject = v.link_id AND r.hour = v.hour;

INSERT INTO click_rollup_hour_dims (kind, subject, hour, dim, value, human, bot)
SELECT 'l', link_id, hour, dim, CASE WHEN rank <= 256 THEN value ELSE '' END,
       sum(human), sum(bot)
  FROM (SELECT link_id, hour, dim, value, human, bot,
               row_number() OVER (PARTITION BY link_id, hour, dim
                                  ORDER BY human + bot DESC, value) AS rank
          FROM (SELECT link_id, date_trunc('hour', time, 'UTC') AS hour, d.dim, d.value,
                       count(*) FILTER (WHERE NOT bot) AS human, count(*) FILTER (WHERE bot) AS bot
                  FROM visits,
                       LATERAL (VALUES (1::smallint, browser), (2::smallint, os),
                                       (3::smallint, device), (4::smallint, country),
                                       (8::smallint, referrer_host)) AS d(dim, value)
                 WHERE d.value IS NOT NULL AND d.value <> ''
                 GROUP BY 1, 2, 3, 4) per_value) ranked
 GROUP BY 1, 2, 3, 4, 5;
