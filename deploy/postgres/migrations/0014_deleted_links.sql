-- 0014: deleting links (issue 21, item 3: DeleteLink, DeleteLinks).
-- Forward-only; applied like 0001.
--
-- deleted_links: one row per deleted link, written in the transaction that
-- deletes its links row (lib/store/link_store.h, DeleteLinks). What it is
-- for:
--  - the erasure of the link's clicks (its counts, rollups, visits), which a
--    background task does after the deletion commits (erase_time set then);
--  - the link's alias, which stays in link_aliases, pointing at the deleted
--    id, until alias_release_time: nobody can take it over meanwhile to
--    catch the stale copies of the link (in messages already sent). NULL
--    for a generated code, which is never reissued (ids only grow); set to
--    NULL when the alias is freed;
--  - who deleted it, and when.
-- A row goes once its link is erased and it holds no alias (the sweep of
-- services/shorten/link_eraser.h). It holds no target URL.
CREATE TABLE deleted_links (
  id                 bigint PRIMARY KEY,
  owner              text NOT NULL,
  code               text NOT NULL,
  alias              text,
  delete_time        timestamptz NOT NULL,
  actor              text NOT NULL,
  alias_release_time timestamptz,
  erase_time         timestamptz
);
-- The erasure's queue: what is not erased yet, oldest first.
CREATE INDEX deleted_links_to_erase ON deleted_links (delete_time, id) WHERE erase_time IS NULL;
-- The aliases held, by when they are freed.
CREATE INDEX deleted_links_held_aliases ON deleted_links (alias_release_time)
  WHERE alias IS NOT NULL;
-- What the sweep forgets.
CREATE INDEX deleted_links_done ON deleted_links (id)
  WHERE erase_time IS NOT NULL AND alias IS NULL;

-- erased_links: the links whose clicks the click store erased
-- (lib/clicks/click_store.h, EraseLinks). A RecordClicks transaction that
-- resolved a code before its link was deleted, or an edge's spool replayed
-- days later, may bring clicks of an erased link: the transaction finds the
-- link here and counts nothing for it. Kept for good: 16 bytes and an
-- index entry per deleted link (ids are never reused).
CREATE TABLE erased_links (
  link_id    bigint PRIMARY KEY,
  erase_time timestamptz NOT NULL
);
