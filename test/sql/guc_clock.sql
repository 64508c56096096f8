-- GUC defaults, their context, and memtx.now() under the logical clock.
SELECT name, setting, unit, context, vartype
  FROM pg_settings WHERE name LIKE 'memtx.%' ORDER BY name;
-- every memtx setting is superuser-only
SELECT count(*) AS not_superuser_only
  FROM pg_settings WHERE name LIKE 'memtx.%' AND context NOT IN ('superuser', 'postmaster', 'sighup');
-- clock follows the transaction when unset
BEGIN;
SELECT memtx.now() = transaction_timestamp() AS follows_transaction;
COMMIT;
SET memtx.logical_now = '2030-01-01 00:00:00+00';
SELECT memtx.now();
SET memtx.logical_now = '2030-06-15 12:30:00+00';
SELECT memtx.now();
SET memtx.logical_now = 'not a time';
SHOW memtx.logical_now;
RESET memtx.logical_now;
SELECT memtx.now() = transaction_timestamp() AS follows_transaction;
-- range checks
SET memtx.confidence_threshold = 1.5;
SET memtx.flow_control = 'sometimes';
SET memtx.default_tier = 'reckless';
SET memtx.lease_timeout = 0;
SET memtx.lease_timeout = '10min';
SHOW memtx.lease_timeout;
RESET memtx.lease_timeout;
-- unknown settings under the reserved prefix are refused
SET memtx.no_such_setting = 1;
-- agents cannot change any setting
CREATE ROLE memtx_guc_agent;
SET ROLE memtx_guc_agent;
SET memtx.confidence_threshold = 0.1;
SET memtx.authority_bypass = 0.1;
SET memtx.default_authority = 1;
SET memtx.default_tier = 'low';
SET memtx.harness_role = 'memtx_guc_agent';
SET memtx.logical_now = '2000-01-01';
SET memtx.flow_control = 'declared';
SET memtx.lease_timeout = 100000;
RESET ROLE;
DROP ROLE memtx_guc_agent;
