-- 0011: where a visit came from beyond its country (issue 19, item 3):
-- region, city and network, from the City and ASN databases (--geoip_db,
-- --geoip_asn_db). Forward-only; applied like 0001.
--
-- The values are what lib/geoip/geo_db.h's Place holds, at most 113 bytes of
-- clean text each: region ISO 3166-2 ("US-CA"), city its English name with
-- its region or country ("Springfield (US-IL)"), network the autonomous
-- system ("AS15169 Google LLC"). NULL when unknown or without the database.
-- Visits made before this migration have NULL in all three.
--
-- Nullable columns without a default: PostgreSQL records them in the
-- catalogue only, on visits and every partition, without rewriting or
-- scanning a row, so this takes a moment whatever the table's size.
ALTER TABLE visits
  ADD COLUMN region  text,
  ADD COLUMN city    text,
  ADD COLUMN network text;
