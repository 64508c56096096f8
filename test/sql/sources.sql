-- Sources: claimants restrict who may stage with a source; observed_at is finite and not
-- later than memtx.now().
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_src_bank;
CREATE ROLE regress_memtx_src_teller IN ROLE regress_memtx_src_bank;
CREATE ROLE regress_memtx_src_mallory;
CREATE VIEW pg_temp.counts AS
    SELECT (SELECT count(*) FROM memtx.records) AS records, (SELECT count(*) FROM memtx.edges) AS edges;

-- register_source with claimants; the two-argument form still works and means "anyone"
SELECT memtx.register_source('core_ledger', 0.95, ARRAY['regress_memtx_src_bank']);
SELECT memtx.register_source('web', 0.4);
SELECT memtx.register_source(name => 'crm', authority => 0.7, claimants => NULL);
SELECT name, authority, claimants FROM memtx.sources ORDER BY name;

-- a member of a claimant role (through a group) stages with the source, and its authority
-- passes the evidence check
SET ROLE regress_memtx_src_teller;
SELECT memtx.begin() AS teller_tx \gset
SELECT memtx.stage(:teller_tx, 'acct:9', 'balance', '100', source => 'core_ledger', confidence => 0.1) AS r \gset
SELECT state FROM memtx.commit(:teller_tx);
RESET ROLE;

-- anyone else gets 42501 at stage time and nothing is written; the trusted source cannot be
-- claimed to skip the evidence check
SELECT * FROM pg_temp.counts;
SET ROLE regress_memtx_src_mallory;
SELECT memtx.begin() AS mallory_tx \gset
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''acct:9'', ''balance'', ''0'', source => ''core_ledger'', confidence => 0.1)', :mallory_tx));
RESET ROLE;
SELECT * FROM pg_temp.counts;
SET ROLE regress_memtx_src_mallory;
-- sources without claimants, and unregistered ones, are open to all
SELECT memtx.stage(:mallory_tx, 'acct:9', 'note', '"hi"', source => 'web') > 0 AS staged_web;
SELECT memtx.stage(:mallory_tx, 'acct:9', 'note2', '"hi"', source => 'unregistered') > 0 AS staged_unregistered;
SELECT count(*) FROM memtx.abort(:mallory_tx);
RESET ROLE;
-- a harness may stage with any source
SELECT memtx.begin() AS h_tx \gset
SELECT memtx.stage(:h_tx, 'acct:10', 'balance', '5', source => 'core_ledger') > 0 AS harness_staged;
SELECT count(*) FROM memtx.abort(:h_tx);

-- re-registering replaces the registration: without claimants the source is open again
SELECT memtx.register_source('core_ledger', 0.95);
SELECT claimants FROM memtx.sources WHERE name = 'core_ledger';
SET ROLE regress_memtx_src_mallory;
SELECT memtx.begin() AS mallory_tx \gset
SELECT memtx.stage(:mallory_tx, 'acct:11', 'balance', '1', source => 'core_ledger') > 0 AS staged_reopened;
RESET ROLE;
-- an empty claimant list: the harness only
SELECT memtx.register_source('core_ledger', 0.95, '{}');
SET ROLE regress_memtx_src_teller;
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''acct:12'', ''balance'', ''1'', source => ''core_ledger'')', memtx.begin()));
RESET ROLE;

-- bad claimants: unknown roles, NULL elements, several dimensions; nothing is written
SELECT pg_temp.try('SELECT memtx.register_source(''s1'', 0.5, ARRAY[''regress_memtx_src_nobody''])');
SELECT pg_temp.try('SELECT memtx.register_source(''s1'', 0.5, ARRAY[''regress_memtx_src_bank'', NULL])');
SELECT pg_temp.try('SELECT memtx.register_source(''s1'', 0.5, ''{{regress_memtx_src_bank}}'')');
SELECT pg_temp.try('SELECT memtx.register_source(''s1'', 1.5, ARRAY[''regress_memtx_src_bank''])');
SET ROLE regress_memtx_src_bank;
SELECT pg_temp.try('SELECT memtx.register_source(''s1'', 0.5, ARRAY[''regress_memtx_src_bank''])');
RESET ROLE;
SELECT count(*) AS sources FROM memtx.sources;

-- the 0.1.0 two-argument C entry point keeps working (a 0.1.0 catalog's declaration)
DO $$
BEGIN
    EXECUTE format('CREATE FUNCTION pg_temp.register_source_010(text, double precision) RETURNS void '
                   'AS %L, %L LANGUAGE C', (SELECT probin FROM pg_proc WHERE oid = 'memtx.register_source(text, double precision, text[])'::regprocedure),
                   'memtx_register_source');
END $$;
SELECT pg_temp.register_source_010('old_caller', 0.6);
SELECT name, authority, claimants FROM memtx.sources WHERE name = 'old_caller';

-- observed_at: finite and not later than memtx.now() (22008), checked before anything is written
SET memtx.logical_now = '2030-06-01 12:00:00+00';
SELECT memtx.begin() AS tx \gset
SELECT * FROM pg_temp.counts;
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', observed_at => ''infinity'')', :tx));
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', observed_at => ''-infinity'')', :tx));
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''e'', ''a'', ''1'', observed_at => ''2030-06-01 12:00:00.000001+00'')', :tx));
SELECT * FROM pg_temp.counts;
SELECT memtx.stage(:tx, 'e', 'a', '1', observed_at => '2030-06-01 12:00:00+00') > 0 AS observed_now;
SELECT memtx.stage(:tx, 'e', 'b', '1', observed_at => '1999-01-01 00:00:00+00') > 0 AS observed_past;
-- the detail names both instants
SET TimeZone = 'UTC';
\set VERBOSITY default
SELECT memtx.stage(:tx, 'e', 'd', '1', observed_at => '2031-01-01 00:00:00+00');
\set VERBOSITY terse
RESET TimeZone;
RESET memtx.logical_now;
-- without a logical clock, memtx.now() is the transaction timestamp
SELECT memtx.begin() AS tx \gset
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''e'', ''c'', ''1'', observed_at => now() + interval ''1 minute'')', :tx));
SELECT memtx.stage(:tx, 'e', 'c', '1', observed_at => now()) > 0 AS observed_at_now;

DROP VIEW pg_temp.counts;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_src_teller;
DROP ROLE regress_memtx_src_mallory;
DROP ROLE regress_memtx_src_bank;
