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
--    for a generated code, which is never reissued (ids only grow);
--  - who deleted it, and when.
-- A row goes once its link is erased and its alias released (the sweep of
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
CREATE INDEX deleted_links_to_erase ON deleted_links (delete_time) WHERE erase_time IS NULL;

-- erased_links: the links whose clicks the click store erased
-- (lib/clicks/click_store.h, EraseLinks). A RecordClicks transaction that
-- resolved a code before its link was deleted may commit after the
-- erasure: it finds the link here and counts nothing for it. Kept for an
-- hour after the erasure (longer than any RecordClicks call can take).
CREATE TABLE erased_links (
  link_id    bigint PRIMARY KEY,
  erase_time timestamptz NOT NULL
);
