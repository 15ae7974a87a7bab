-- 0010: link labels (issue 19, item 2: campaigns). Forward-only; applied
-- like 0001.
--
-- A label is a (key, value) pair of a tenant (links.owner); the rules for
-- keys and values live in lib/store/link_labels.h and docs/api.md. Each
-- distinct (tenant, key, value) gets an id once, when the first link that
-- carries it is created (insert-if-missing in the create path), and keeps it:
-- the click rollups of a label are kept under that id (subject kind 'c',
-- lib/clicks/rollups.h), so a campaign's statistics read one subject instead
-- of summing its links.
CREATE TABLE labels (
  id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant text NOT NULL,
  key    text NOT NULL,
  value  text NOT NULL,
  UNIQUE (tenant, key, value)
);

-- The ids of the labels a link was created with, in ascending key order.
-- NULL or empty: no labels (every link made before this migration). The
-- ingest reads them with the link to add its clicks to each label's
-- rollups, so clicks count under the labels the link had when they were
-- counted.
ALTER TABLE links ADD COLUMN label_ids bigint[];
