-- memtx.stage: named arguments, defaults, parents, observed_at inheritance, bad input writes nothing.
\i test/sql/include/prelude.psql
CREATE VIEW pg_temp.counts AS
    SELECT (SELECT count(*) FROM memtx.records) AS records, (SELECT count(*) FROM memtx.edges) AS edges;
CREATE ROLE regress_memtx_a;
CREATE ROLE regress_memtx_b;
SELECT memtx.register_source('crm', 0.8);
-- observation times below are in 2030: the memtx clock is later
SET memtx.logical_now = '2030-12-31 00:00:00+00';
SELECT memtx.begin() AS tx;   -- 1

-- every default of the spec
SELECT memtx.stage(1, 'alice', 'email', '"a@example.com"');
SELECT id, tx_id, namespace, entity, attribute, value, kind, state, source, authority,
       confidence, owner = current_user AS owner_is_caller, readers, writers, scope, valid,
       observed_at, verdict, reason, committed_seq
  FROM memtx.records WHERE id = 1;
SELECT count(*) AS edges FROM memtx.edges;

-- named arguments, every one given; a registered source's authority is copied
SELECT memtx.stage(tx => 1, entity => 'alice', attribute => 'plan', value => '{"tier": "gold"}',
                   kind => 'summary', source => 'crm', confidence => 0.75,
                   derived_from => ARRAY[1], scope => 'shared', readers => ARRAY['regress_memtx_a'],
                   writers => ARRAY['regress_memtx_b'],
                   valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)',
                   observed_at => '2030-02-01 10:00:00+00');
SELECT id, kind, source, authority, confidence, readers, writers, scope,
       valid = '[2030-01-01 00:00+00, 2031-01-01 00:00+00)'::tstzrange AS valid_as_given,
       observed_at = '2030-02-01 10:00:00+00' AS observed_as_given
  FROM memtx.records WHERE id = 2;
SELECT child, parent FROM memtx.edges ORDER BY child, parent;
-- an unregistered source gets memtx.default_authority
SELECT memtx.stage(1, 'bob', 'email', '"b@example.com"', source => 'rumor');
SET memtx.default_authority = 0.3;
SELECT memtx.stage(1, 'bob', 'phone', '"555"', source => 'rumor2');
RESET memtx.default_authority;
SELECT id, source, authority FROM memtx.records WHERE id IN (3, 4) ORDER BY id;
-- the registry is read at staging: later changes do not touch staged records
SELECT memtx.register_source('crm', 0.2);
SELECT authority FROM memtx.records WHERE id = 2;
SELECT memtx.register_source('crm', 0.8);

-- parents: duplicates collapse into one edge
SELECT memtx.stage(1, 'carol', 'email', '"c@example.com"', derived_from => ARRAY[1, 3, 1]);
SELECT child, parent FROM memtx.edges WHERE child = 5 ORDER BY parent;

-- observed_at: inherited from the parents' latest when not given
SELECT memtx.stage(1, 'tool', 'result', '1', observed_at => '2030-01-01 00:00:00+00');   -- 6
SELECT memtx.stage(1, 'tool', 'result2', '2', observed_at => '2030-03-01 00:00:00+00');  -- 7
SELECT memtx.stage(1, 'derived', 'x', '3', derived_from => ARRAY[6, 7]);                -- 8: latest, 2030-03-01
SELECT memtx.stage(1, 'derived', 'y', '4', derived_from => ARRAY[6, 1]);                -- 9: 2030-01-01 (1 has none)
SELECT memtx.stage(1, 'derived', 'z', '5', derived_from => ARRAY[1, 3]);                -- 10: no parent has one
SELECT memtx.stage(1, 'derived', 'w', '6', derived_from => ARRAY[8],
                   observed_at => '2029-01-01 00:00:00+00');                            -- 11: given wins
SELECT memtx.stage(1, 'derived', 'v', '7', derived_from => ARRAY[8]);                   -- 12: grandparent's time via 8
SELECT id, observed_at AT TIME ZONE 'UTC' AS observed_utc FROM memtx.records WHERE id BETWEEN 6 AND 12 ORDER BY id;

-- parents must exist (42704), and nothing is written
SELECT * FROM pg_temp.counts;
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => ARRAY[999])');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => ARRAY[1, 999, 3])');
-- a parent in another namespace is refused like an unknown id (42704; SPEC
-- §3, §20), and the error does not name the namespace
SELECT memtx.begin(namespace => 'other') AS tx;   -- 2
SELECT memtx.stage(2, 'alice', 'email', '"x@example.com"');   -- 13
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => ARRAY[13])');
SELECT pg_temp.try('SELECT memtx.stage(2, ''e'', ''a'', ''1'', derived_from => ARRAY[1])');
-- tool: entities and tool_action records belong to memtx.act
SELECT pg_temp.try('SELECT memtx.stage(1, ''tool:send_email'', ''1'', ''{}'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', kind => ''tool_action'')');
-- NULL or unknown transaction
SELECT pg_temp.try('SELECT memtx.stage(NULL, ''e'', ''a'', ''1'')');
SELECT pg_temp.try('SELECT memtx.stage(999, ''e'', ''a'', ''1'')');
-- NULL, empty and oversized entity, attribute, value
SELECT pg_temp.try('SELECT memtx.stage(1, NULL, ''a'', ''1'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', NULL, ''1'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', NULL)');
SELECT pg_temp.try('SELECT memtx.stage(1, '''', ''a'', ''1'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', '''', ''1'')');
SELECT pg_temp.try(format('SELECT memtx.stage(1, %L, ''a'', ''1'')', repeat('e', 1025)));
SELECT pg_temp.try(format('SELECT memtx.stage(1, ''e'', %L, ''1'')', repeat('a', 1025)));
SELECT pg_temp.try(format('SELECT memtx.stage(1, ''e'', ''a'', to_jsonb(%L::text))', repeat('v', 1100000)));
-- numbers outside 0..1
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', confidence => 1.01)');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', confidence => -0.01)');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', confidence => 1.0000001)');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', confidence => ''NaN'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', confidence => NULL)');
SELECT pg_temp.try('SELECT memtx.register_source(''loud'', 1.5)');
SELECT pg_temp.try('SELECT memtx.register_source(''quiet'', -0.5)');
-- unknown enum labels
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', kind => ''opinion'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', scope => ''galactic'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', kind => NULL)');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', scope => NULL)');
-- NULL array elements, NULL arrays, unknown roles, bad shapes
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => ARRAY[1, NULL])');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => NULL)');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', derived_from => ''{{1},{3}}'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', readers => ARRAY[NULL::text])');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', writers => ARRAY[''regress_memtx_a'', NULL])');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', readers => ARRAY[''regress_memtx_nobody''])');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''1'', valid => ''empty'')');
SELECT pg_temp.try('SELECT memtx.stage(1, ''e'', ''a'', ''not json'')');
SELECT * FROM pg_temp.counts;
SELECT count(*) AS sources FROM memtx.sources;

-- staging requires being able to read every declared parent: an unreadable one is
-- refused like a missing one (42704)
SET ROLE regress_memtx_a;
SELECT memtx.begin() AS tx;   -- 3
SELECT memtx.stage(3, 'secret', 'x', '1');                        -- 14, private
SELECT memtx.stage(3, 'open', 'x', '1', scope => 'public');        -- 15
SELECT memtx.stage(3, 'shared', 'x', '1', readers => ARRAY['regress_memtx_b']);  -- 16
RESET ROLE;
SET ROLE regress_memtx_b;
SELECT memtx.begin() AS tx;   -- 4
SELECT pg_temp.try('SELECT memtx.stage(4, ''mine'', ''x'', ''1'', derived_from => ARRAY[14])');
SELECT memtx.stage(4, 'mine', 'x', '1', derived_from => ARRAY[15, 16]);   -- 17
RESET ROLE;
SELECT id, owner, tx_id FROM memtx.records WHERE id >= 14 ORDER BY id;
SELECT * FROM pg_temp.counts;

DROP VIEW pg_temp.counts;
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_a;
DROP ROLE regress_memtx_b;
