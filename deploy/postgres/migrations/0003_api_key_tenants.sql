-- 0003: API keys belong to a tenant (issue 4), the owner of the links the
-- key creates (links.owner). Several keys may share a tenant. Forward-only;
-- applied like 0001 and 0002.
--
-- A key stored before this migration (none in practice: keys were not used
-- before it) becomes its own tenant, named after the key.
ALTER TABLE api_keys ADD COLUMN tenant text;
UPDATE api_keys SET tenant = name WHERE tenant IS NULL;
ALTER TABLE api_keys ALTER COLUMN tenant SET NOT NULL;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_tenant_not_empty CHECK (tenant <> '');
