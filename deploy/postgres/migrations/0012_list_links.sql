-- 0012: listing a tenant's links (issue 21, item 1: ListLinks). Forward-only;
-- applied like 0001.
--
-- ListLinks pages by keyset (lib/store/link_list.h): each page is one range
-- read of an index that starts where the previous page ended, so the
-- millionth page costs what the first does. One index per way of walking:
--   - by create time: links_owner_create_time below;
--   - by create time within a label: link_label_members, one row per label
--     a link carries (a link has at most 16), kept by trigger so that every
--     way links are written (INSERT, COPY, later updates) keeps it;
--   - by clicks: link_click_totals, a link's human clicks as the rollup
--     merge adds them (lib/clicks/pg), a few seconds behind click_counts.
--
-- On a large links table the index build takes a while and holds a SHARE
-- lock on links (writes wait, reads go on): about 10 s per 10^7 links on
-- the benchmark machine (docs/benchmarks.md). Operators who cannot pause
-- writes that long create it first by hand with
--   CREATE INDEX CONCURRENTLY links_owner_create_time ON links (owner, create_time, id);
-- and this migration then finds it (IF NOT EXISTS).
CREATE INDEX IF NOT EXISTS links_owner_create_time ON links (owner, create_time, id);

CREATE TABLE link_label_members (
  label_id    bigint NOT NULL,
  create_time timestamptz NOT NULL,  -- the link's
  link_id     bigint NOT NULL,
  PRIMARY KEY (label_id, create_time, link_id)
);
CREATE INDEX link_label_members_link ON link_label_members (link_id);

-- Keeps link_label_members equal to links.label_ids. Row-level, and only
-- for links with labels (the WHEN clauses), so unlabelled links cost
-- nothing; a labelled link costs one index insert per label.
CREATE FUNCTION link_label_members_sync() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    DELETE FROM link_label_members WHERE link_id = OLD.id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND cardinality(NEW.label_ids) > 0 THEN
    INSERT INTO link_label_members (label_id, create_time, link_id)
    SELECT DISTINCT unnest(NEW.label_ids), NEW.create_time, NEW.id;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER links_label_members_insert AFTER INSERT ON links
  FOR EACH ROW WHEN (cardinality(NEW.label_ids) > 0)
  EXECUTE FUNCTION link_label_members_sync();
CREATE TRIGGER links_label_members_update AFTER UPDATE OF label_ids, create_time ON links
  FOR EACH ROW
  WHEN (OLD.label_ids IS DISTINCT FROM NEW.label_ids OR OLD.create_time <> NEW.create_time)
  EXECUTE FUNCTION link_label_members_sync();
CREATE TRIGGER links_label_members_delete AFTER DELETE ON links
  FOR EACH ROW WHEN (cardinality(OLD.label_ids) > 0)
  EXECUTE FUNCTION link_label_members_sync();

INSERT INTO link_label_members (label_id, create_time, link_id)
SELECT DISTINCT unnest(label_ids), create_time, id FROM links WHERE cardinality(label_ids) > 0;

-- Human clicks per link as merged into the rollups: written by the rollup
-- merge in the transaction that moves pending rows into
-- click_rollup_hours (so it counts each click once), read by ListLinks to
-- rank. owner is the link's, copied so that the rank index needs no join.
-- Links never clicked have no row.
CREATE TABLE link_click_totals (
  link_id bigint PRIMARY KEY,
  owner   text NOT NULL,
  human   bigint NOT NULL CHECK (human >= 0)
);
CREATE INDEX link_click_totals_rank ON link_click_totals (owner, human, link_id);

-- What the rollups hold now; pending rows are added when they are merged.
-- (While replicas of the previous release still run, merges they make add
-- nothing here: the ranking runs that far behind until they are replaced.)
INSERT INTO link_click_totals (link_id, owner, human)
SELECT c.subject, l.owner, sum(c.human)
FROM (SELECT subject, human FROM click_rollup_hours WHERE kind = 'l'
      UNION ALL
      SELECT subject, human FROM click_rollup_days WHERE kind = 'l') c
JOIN links l ON l.id = c.subject
GROUP BY c.subject, l.owner
HAVING sum(c.human) > 0;
