-- References between memtx tables: kept by triggers, not foreign keys, so
-- that pg_restore -j can load the tables in any order (test/dump/run.sh
-- restores in parallel); every write but COPY FROM is checked as a foreign
-- key would check it.
\i test/sql/include/prelude.psql

-- no foreign key between memtx tables: pg_dump records no order among an
-- extension's configuration tables that pg_restore -j would follow
SELECT conrelid::regclass AS table_with_foreign_key, conname
  FROM pg_constraint
 WHERE contype = 'f' AND connamespace = 'memtx'::regnamespace
 ORDER BY 1, 2;
-- every reference has its trigger, on both sides
SELECT tgrelid::regclass AS "table", tgname, tgfoid::regproc AS function
  FROM pg_trigger
 WHERE tgfoid IN ('memtx.reference_check'::regproc, 'memtx.reference_check_inserted'::regproc,
                  'memtx.reference_guard'::regproc)
 ORDER BY 1::text, 2;

SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'order:1', 'eligible', 'true') AS a \gset
SELECT memtx.stage(:tx, 'order:1', 'summary', '"yes"', kind => 'summary', derived_from => ARRAY[:a]) AS b \gset

-- the referencing side: a row naming a missing transaction or record is refused
SELECT pg_temp.try(format($$INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, authority, confidence, owner, staged_xid, staged_pos)
                            VALUES (%s, 'default', 'e', 'a', '1', 0.5, 1, current_user, pg_current_xact_id(), 0)$$, :tx + 100));
-- records are checked once per INSERT statement: a statement whose second row names a
-- missing transaction is refused whole, naming that row's transaction
SELECT count(*) AS records_before FROM memtx.records \gset
SELECT pg_temp.try(format($$INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, authority, confidence, owner, staged_xid, staged_pos)
                            VALUES (%s, 'default', 'e', 'a', '1', 0.5, 1, current_user, pg_current_xact_id(), 0),
                                   (%s, 'default', 'e', 'b', '1', 0.5, 1, current_user, pg_current_xact_id(), 0)$$, :tx, :tx + 200));
SELECT pg_temp.try(format($$INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, authority, confidence, owner, staged_xid, staged_pos)
                            VALUES (%s, 'other', 'e', 'a', '1', 0.5, 1, current_user, pg_current_xact_id(), 0)$$, :tx));
SELECT count(*) - :records_before AS records_written FROM memtx.records;
SELECT pg_temp.try(format('INSERT INTO memtx.edges VALUES (%s, %s, %L)', :b + 100, :a, 'default'));
SELECT pg_temp.try(format('INSERT INTO memtx.edges VALUES (%s, 0, %L)', :b, 'default'));
SELECT pg_temp.try(format('INSERT INTO memtx.read_set VALUES (%s, %s, %L)', :tx + 100, :a, 'default'));
SELECT pg_temp.try(format('INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) VALUES (%s, %s, %L)', :a, :b + 100, 'default'));
SELECT pg_temp.try(format('INSERT INTO memtx.compensations (root_id, action_id, tool, namespace) VALUES (%s, %s, %L, %L)', :b + 100, :a, 'refund', 'default'));
SELECT pg_temp.try(format($$INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, allowed, action_id, gate_snapshot, gate_xid, gate_pos)
                            VALUES (%s, 'default', 't', false, true, %s, pg_current_snapshot(), pg_current_xact_id(), 0)$$, :tx, :b + 100));
SELECT pg_temp.try(format('UPDATE memtx.edges SET parent = %s WHERE child = %s', :b + 100, :b));
-- a row names only rows of its own namespace (SPEC §3): a transaction or
-- record of another namespace is refused like a missing one
SELECT memtx.begin(namespace => 'elsewhere') AS other_tx \gset
SELECT memtx.stage(:other_tx, 'order:9', 'eligible', 'true') AS other \gset
SELECT pg_temp.try(format('INSERT INTO memtx.edges VALUES (%s, %s, %L)', :b, :other, 'default'));
SELECT pg_temp.try(format('INSERT INTO memtx.read_set VALUES (%s, %s, %L)', :other_tx, :a, 'default'));
SELECT pg_temp.try(format('UPDATE memtx.edges SET namespace = %L WHERE child = %s', 'elsewhere', :b));
SELECT pg_temp.try(format('UPDATE memtx.transactions SET namespace = %L WHERE id = %s', 'elsewhere', :tx));
-- and one naming what exists is taken (a null action_id names nothing)
SELECT pg_temp.try(format('INSERT INTO memtx.read_set VALUES (%s, %s, %L)', :tx, :b, 'default'));
SELECT pg_temp.try(format($$INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, allowed, gate_snapshot, gate_xid, gate_pos)
                            VALUES (%s, 'default', 't', false, false, pg_current_snapshot(), pg_current_xact_id(), 0)$$, :tx));

-- the referenced side: what rows name cannot be deleted, renumbered or truncated away
SELECT pg_temp.try(format('DELETE FROM memtx.records WHERE id = %s', :a));
SELECT pg_temp.try(format('UPDATE memtx.transactions SET id = id + 100 WHERE id = %s', :tx));
SELECT pg_temp.try(format('DELETE FROM memtx.transactions WHERE id = %s', :tx));
SELECT pg_temp.try('TRUNCATE memtx.records');
SELECT pg_temp.try('TRUNCATE memtx.transactions');
-- what nothing names can go: a transaction of its own
SELECT memtx.begin() AS lone \gset
SELECT pg_temp.try(format('DELETE FROM memtx.transactions WHERE id = %s', :lone));

-- the API's own checks are unchanged
SELECT pg_temp.try(format('SELECT memtx.stage(%s, %L, %L, %L, derived_from => ARRAY[%s::bigint])', :tx, 'order:1', 'x', '1', :b + 100));

-- COPY FROM, how pg_restore loads the store, is not checked: in a parallel
-- restore the referenced rows may arrive later
COPY memtx.edges (child, parent, namespace) FROM stdin;
1000	999	default
\.
SELECT child, parent FROM memtx.edges WHERE child = 1000;
-- the exemption holds only while this backend copies into the table
SELECT memtx.copying_into('memtx.edges'::regclass) AS copying_outside_copy;
DELETE FROM memtx.edges WHERE child = 1000;

-- a superuser's session_replication_role = replica skips the checks, as it
-- skipped the foreign keys' triggers
SET session_replication_role = replica;
SELECT pg_temp.try($$INSERT INTO memtx.edges VALUES (1001, 999, 'default')$$);
RESET session_replication_role;
DELETE FROM memtx.edges WHERE child = 1001;

-- the one violation: the action log row written by hand above is an act
-- decision without its receipt (SPEC §11)
SELECT invariant, detail FROM memtx.check_invariants();
