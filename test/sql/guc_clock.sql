-- GUC defaults, their context, and memtx.now() under the logical clock.
\i test/sql/include/prelude.psql
-- (the test build's memtx.fault_at and memtx.fault_action are not settings
-- of a release build: test/t/010_faults.pl covers them)
SELECT name, setting, unit, context, vartype
  FROM pg_settings WHERE name LIKE 'memtx.%' AND name NOT LIKE 'memtx.fault%' ORDER BY name;
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
-- the logical clock is ISO 8601 with an explicit UTC offset; anything that
-- would be read in the caller's TimeZone or DateStyle is refused (22007)
\set VERBOSITY default
SET memtx.logical_now = '2026-01-15 12:00';
\set VERBOSITY terse
SELECT v, pg_temp.try(format('SET memtx.logical_now = %L', v)) AS outcome
  FROM unnest(ARRAY[
         '2026-01-15',                   -- no time, no offset
         '2026-01-15 12:00:00',          -- no offset
         '2026-01-15 12:00 UTC',         -- a zone name is not an offset
         '2026-01-15 12:00 +00',         -- nothing between time and offset
         '01/02/2026 12:00+00',          -- DateStyle order
         '15.01.2026 12:00+00',
         'Jan 15 2026 12:00+00',
         'now', 'today', 'epoch', 'infinity', '-infinity',
         '2026-02-29 12:00+00',          -- not a leap year
         '2026-13-01 12:00+00',
         '2026-01-15 24:00+00',
         '2026-01-15 12:60+00',
         '2026-01-15 12:00:60+00',
         '2026-01-15 12:00+16',          -- offset out of range
         '2026-01-15 12:00+05:',
         '2026-01-15 12:00:00.1234567+00', -- below a microsecond
         '0000-01-01 00:00+00',
         ' 2026-01-15 12:00+00',
         '2026-01-15 12:00+00 ']) v;
-- the setting keeps its previous value after a refusal
SET memtx.logical_now = '2026-01-15 12:00+00';
SET memtx.logical_now = '2026-01-15 12:00';
SHOW memtx.logical_now;
-- accepted spellings, all the same instant
SELECT v, pg_temp.try(format('SET memtx.logical_now = %L', v)) AS outcome,
       memtx.now() = '2026-01-15 12:00:00+00'::timestamptz AS same_instant
  FROM unnest(ARRAY[
         '2026-01-15 12:00+00',
         '2026-01-15T12:00:00Z',
         '2026-01-15 12:00:00.000000+00:00',
         '2026-01-15 14:00+02',
         '2026-01-15 17:30+0530',
         '2026-01-15 07:30-04:30',
         '2026-01-14T23:00:00-13']) v;
SET memtx.logical_now = '2024-02-29 23:59:59.999999+00';
SELECT memtx.now() = '2024-02-29 23:59:59.999999+00'::timestamptz AS leap_day;
-- no session setting of the caller moves the clock once it is set
SET memtx.logical_now = '2026-01-02 03:04:05+00';
SET TimeZone = 'Pacific/Kiritimati';
SET DateStyle = 'SQL, DMY';
SELECT memtx.now() = '2026-01-02 03:04:05+00'::timestamptz AS unmoved;
SET TimeZone = 'America/Adak';
SET DateStyle = 'German, MDY';
SELECT memtx.now() = '2026-01-02 03:04:05+00'::timestamptz AS unmoved;
RESET TimeZone;
RESET DateStyle;
RESET memtx.logical_now;
\set VERBOSITY default
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
