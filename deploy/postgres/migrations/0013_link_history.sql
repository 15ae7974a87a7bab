-- 0013: the history of link changes (issue 21, item 2: UpdateLink).
-- Forward-only; applied like 0001.
--
-- One row per field a change changed: change_no numbers a link's changes
-- from 1 (taken under the link's row lock, so concurrent changes of one
-- link number in the order they commit), field_no the fields within one,
-- in the order lib/store/link_update.h's DiffLink lists them. Values are
-- text as DiffLink writes them ("" for none). Read by GetLink with view
-- FULL; kept as long as the link.
CREATE TABLE link_history (
  link_id     bigint NOT NULL,
  change_no   integer NOT NULL CHECK (change_no > 0),
  field_no    smallint NOT NULL CHECK (field_no > 0),
  change_time timestamptz NOT NULL,
  actor       text NOT NULL,
  field       text NOT NULL,
  old_value   text NOT NULL,
  new_value   text NOT NULL,
  PRIMARY KEY (link_id, change_no, field_no)
);
