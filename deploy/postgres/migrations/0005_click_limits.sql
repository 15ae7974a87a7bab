-- 0005: click limits (issue 5, ShortenRequest.max_clicks). Forward-only;
-- applied like 0001.
--
-- max_clicks: the budget of human clicks; NULL = unlimited.
-- clicks_exhausted_time: set once, by the RecordClicks transaction that
-- brings the link's human total (click_counts, bot = false) to max_clicks or
-- beyond; from then on the link resolves as EXPIRED. Kept apart from
-- expire_time so that the link's own expiry stays what its creator asked for.
ALTER TABLE links ADD COLUMN max_clicks bigint CHECK (max_clicks > 0);
ALTER TABLE links ADD COLUMN clicks_exhausted_time timestamptz;
ALTER TABLE links ADD CONSTRAINT links_exhausted_needs_limit
  CHECK (clicks_exhausted_time IS NULL OR max_clicks IS NOT NULL);
