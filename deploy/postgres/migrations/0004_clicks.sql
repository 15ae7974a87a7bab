-- 0004: click statistics (issue 5). Forward-only; applied like 0001.
--
-- RecordClicks writes a batch in one transaction: its id into click_batches
-- (a batch id seen before makes the whole batch a no-op: the edge retries
-- with the same id), its hourly counts into click_counts with one upsert,
-- and, when visits are recorded, one row per click into visits.
--
-- Distribution (docs/scaling.md): click_counts and visits are keyed by
-- link_id; click_batches by batch_id (a reference table in Citus terms is not
-- needed: it is only ever probed by its own key).

-- One row per batch recorded; the primary key makes a retried batch a no-op.
-- events: how many clicks the batch counted (for operators, not read back).
CREATE TABLE click_batches (
  batch_id    text PRIMARY KEY CHECK (octet_length(batch_id) BETWEEN 1 AND 128),
  recorded_at timestamptz NOT NULL DEFAULT now(),
  events      integer NOT NULL CHECK (events >= 0)
);

-- Clicks per link per UTC hour, bots apart from humans (bot = false).
CREATE TABLE click_counts (
  link_id bigint NOT NULL,
  hour    timestamptz NOT NULL,
  bot     boolean NOT NULL,
  count   bigint NOT NULL CHECK (count >= 0),
  PRIMARY KEY (link_id, hour, bot)
);

-- One row per click when visits are recorded. Partitioned by month (UTC) so
-- that retention drops whole partitions instead of deleting rows. Partitions
-- are created on demand by create_visits_partition; there is no default
-- partition (it would have to be scanned whenever a month is added).
CREATE TABLE visits (
  time          timestamptz NOT NULL,
  link_id       bigint NOT NULL,
  -- Hex of the first 16 bytes of SHA-256(full IP "\n" User-Agent).
  client_id     text NOT NULL,
  -- Anonymised by default (IPv4 /24, IPv6 /48); NULL when unknown.
  ip            inet,
  browser       text NOT NULL,
  browser_major integer NOT NULL,
  os            text NOT NULL,
  os_version    text NOT NULL,
  device        text NOT NULL CHECK (device IN ('desktop', 'mobile', 'tablet', 'bot')),
  bot           boolean NOT NULL,
  -- Host of the Referer; NULL when there was none (or no usable one).
  referrer_host text,
  -- ISO 3166 alpha-2 from the GeoIP database; NULL when unknown or none.
  country       text
) PARTITION BY RANGE (time);
-- Statistics read one link's visits over a time range.
CREATE INDEX visits_link_time ON visits (link_id, time);

-- Both functions below take the transaction-scoped advisory lock 130195279934579
-- ('visits' in ASCII, read as a number), so that partition DDL of concurrent
-- replicas runs one at a time.

-- Creates visits_YYYY_MM for the UTC month of p_month_start (which must be
-- the first instant of that month), unless it exists. Safe to call from any
-- number of replicas at once: the advisory lock serialises them, and a
-- partition created by another transaction just before is found by IF NOT
-- EXISTS (or, should a race remain, its duplicate_table error is swallowed).
-- Returns the partition's name.
CREATE FUNCTION create_visits_partition(p_month_start timestamptz) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  month date := (p_month_start AT TIME ZONE 'UTC')::date;
  lo timestamptz := month::timestamp AT TIME ZONE 'UTC';
  -- date + interval is a timestamp without zone: no DST shifts the bound.
  hi timestamptz := (month + interval '1 month') AT TIME ZONE 'UTC';
  name text := 'visits_' || to_char(month, 'YYYY_MM');
BEGIN
  IF lo <> p_month_start THEN
    RAISE EXCEPTION 'create_visits_partition: % is not the start of a UTC month', p_month_start
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM pg_advisory_xact_lock(130195279934579);
  BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF visits FOR VALUES FROM (%L) TO (%L)',
                   name, lo, hi);
  EXCEPTION WHEN duplicate_table THEN
    NULL;
  END;
  RETURN name;
END
$$;

-- Drops every visits_YYYY_MM partition whose month ends at or before
-- p_cutoff (so no visit at or after p_cutoff is lost). Returns the names of
-- the partitions dropped.
CREATE FUNCTION drop_visits_partitions_before(p_cutoff timestamptz) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  part text;
BEGIN
  PERFORM pg_advisory_xact_lock(130195279934579);
  FOR part IN
    SELECT c.relname FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'visits'::regclass
       AND c.relname ~ '^visits_[0-9]{4}_[0-9]{2}$'
       AND (to_date(substr(c.relname, 8), 'YYYY_MM') + interval '1 month') AT TIME ZONE 'UTC'
           <= p_cutoff
     ORDER BY c.relname
  LOOP
    EXECUTE format('DROP TABLE %I', part);
    RETURN NEXT part;
  END LOOP;
END
$$;
