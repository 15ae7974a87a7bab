-- 0008: infrastructure keys (issue 17). Forward-only; applied like 0001.
--
-- An infrastructure key (a redirect edge's) has no tenant: tenant IS NULL.
-- Only such keys may hold record_clicks and watch_invalidations, which act
-- on every tenant at once (spending click budgets, feeding statistics,
-- seeing every revocation); they hold nothing but those and resolve. The
-- service checks the same rule before it writes (auth::ValidateKeyScopes);
-- these constraints keep it true for rows written any other way. `scopes`
-- is the canonical ScopeSet::ToString(): sorted names, comma-separated.
ALTER TABLE api_keys ALTER COLUMN tenant DROP NOT NULL;

-- Keys stored before this migration, which docs/operations.md describes
-- ("Upgrading to infrastructure keys"):
--
-- 1. Edge keys, whose every scope is record_clicks or resolve (what
--    deploy/local/run.sh and the docs made): they become infrastructure
--    keys. One that holds resolve also gets watch_invalidations, split from
--    resolve by this version, so edges running with it keep their
--    invalidation stream through the upgrade.
UPDATE api_keys
   SET tenant = NULL,
       scopes = CASE WHEN scopes = 'record_clicks,resolve'
                     THEN 'record_clicks,resolve,watch_invalidations'
                     ELSE scopes END
 WHERE scopes IN ('record_clicks', 'record_clicks,resolve');

-- 2. Any other key holding record_clicks is a tenant's key (it holds
--    shorten, revoke, stats or admin too): it loses record_clicks and keeps
--    its tenant and everything else (admin implies record_clicks anyway).
UPDATE api_keys
   SET scopes = array_to_string(array_remove(string_to_array(scopes, ','), 'record_clicks'), ',')
 WHERE tenant IS NOT NULL AND 'record_clicks' = ANY (string_to_array(scopes, ','));

-- 3. Keys holding resolve without record_clicks stay tenant keys: they keep
--    Resolve and BatchResolve but can no longer open WatchInvalidations.

ALTER TABLE api_keys ADD CONSTRAINT api_keys_infrastructure_scopes_need_no_tenant
  CHECK (tenant IS NULL OR NOT (string_to_array(scopes, ',')
                                && ARRAY['record_clicks', 'watch_invalidations']));
ALTER TABLE api_keys ADD CONSTRAINT api_keys_no_tenant_infrastructure_scopes_only
  CHECK (tenant IS NOT NULL OR string_to_array(scopes, ',')
                               <@ ARRAY['record_clicks', 'resolve', 'watch_invalidations']);
