-- Source and tool registries, role tiers: harness-only upserts with checked input.
\i test/sql/include/prelude.psql

SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_source('rumor', 0);
SELECT memtx.register_source('crm', 0.85);   -- update
SELECT name, authority FROM memtx.sources ORDER BY name;

SELECT memtx.register_tool('send_email', false);
SELECT memtx.register_tool('issue_refund', true, 'reverse_refund');
SELECT memtx.register_tool(name => 'lookup', reversible => true);
SELECT memtx.register_tool('send_email', true, 'recall_email');  -- update
SELECT name, reversible, compensator FROM memtx.tools ORDER BY name;

-- bad input: NULLs, ranges, empty and huge names
SELECT pg_temp.try('SELECT memtx.register_source(NULL, 0.5)');
SELECT pg_temp.try('SELECT memtx.register_source(''x'', NULL)');
SELECT pg_temp.try('SELECT memtx.register_source(''x'', 1.01)');
SELECT pg_temp.try('SELECT memtx.register_source(''x'', -0.01)');
-- the message prints every digit that matters
SELECT pg_temp.try('SELECT memtx.register_source(''x'', 1.0000001)');
SELECT pg_temp.try('SELECT memtx.register_source(''x'', -1e-300)');
SELECT pg_temp.try('SELECT memtx.register_source(''x'', ''NaN'')');
SELECT pg_temp.try('SELECT memtx.register_source('''', 0.5)');
SELECT pg_temp.try(format('SELECT memtx.register_source(%L, 0.5)', repeat('x', 300)));
SELECT pg_temp.try('SELECT memtx.register_tool(NULL, true)');
SELECT pg_temp.try('SELECT memtx.register_tool(''t'', NULL)');
SELECT pg_temp.try('SELECT memtx.register_tool(''t'', true, '''')');
SELECT count(*) AS nothing_written FROM memtx.sources WHERE name = 'x';

-- role tiers
CREATE ROLE regress_memtx_planner;
SELECT memtx.set_role_tier('regress_memtx_planner', 'high');
SELECT memtx.set_role_tier('regress_memtx_planner', 'external_action');
SELECT role_name, tier FROM memtx.role_tiers;
SELECT pg_temp.try('SELECT memtx.set_role_tier(''regress_memtx_nobody'', ''low'')');
SELECT pg_temp.try('SELECT memtx.set_role_tier(''regress_memtx_planner'', ''reckless'')');
SELECT memtx.set_role_tier('regress_memtx_planner', NULL);
SELECT count(*) FROM memtx.role_tiers;

-- registries are harness operations
SET ROLE regress_memtx_planner;
SELECT pg_temp.try('SELECT memtx.register_source(''mine'', 1.0)');
SELECT pg_temp.try('SELECT memtx.register_tool(''mine'', true)');
SELECT pg_temp.try('SELECT memtx.set_role_tier(''regress_memtx_planner'', ''low'')');
-- a non-harness learns nothing about roles: the harness check comes first
SELECT pg_temp.try('SELECT memtx.set_role_tier(''regress_memtx_nobody'', ''low'')');
RESET ROLE;
-- a member of memtx.harness_role is a harness
CREATE ROLE regress_memtx_harness;
GRANT regress_memtx_harness TO regress_memtx_planner;
SET memtx.harness_role = 'regress_memtx_harness';
SET ROLE regress_memtx_planner;
SELECT pg_temp.try('SELECT memtx.register_source(''harness-src'', 0.7)');
RESET ROLE;
RESET memtx.harness_role;
SELECT name, authority FROM memtx.sources WHERE name = 'harness-src';
DROP ROLE regress_memtx_planner;
DROP ROLE regress_memtx_harness;
