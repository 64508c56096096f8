-- Upgrades keep the data: a store populated at 0.1.0 through the API is
-- updated with ALTER EXTENSION memtx UPDATE, keeps every row and keeps
-- working; and the upgraded catalog equals a fresh install's.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS memtx CASCADE;
DROP ROLE IF EXISTS regress_memtx_upgrade;
RESET client_min_messages;
CREATE ROLE regress_memtx_upgrade;

CREATE EXTENSION memtx VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'memtx';

-- ---------------------------------------------------------------- populate
-- registries: sources, tools, role tiers
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_tool('send_email', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.set_role_tier('regress_memtx_upgrade', 'high');
DO $$
DECLARE
    t1 bigint; t2 bigint; t3 bigint; t4 bigint; t5 bigint;
    b bigint; s bigint; p bigint; i bigint; c bigint; h bigint; act bigint;
BEGIN
    -- every kind, committed: belief -> summary -> profile -> index_entry, shared_copy
    t1 := memtx.begin('medium');
    b := memtx.stage(t1, 'order:1', 'eligible', 'true', source => 'crm', confidence => 0.9);
    s := memtx.stage(t1, 'order:1', 'summary', '"eligible"', kind => 'summary', derived_from => ARRAY[b]);
    p := memtx.stage(t1, 'customer:1', 'profile', '{"tier": "gold"}', kind => 'profile', derived_from => ARRAY[s]);
    i := memtx.stage(t1, 'index', 'order:1', '"eligible order"', kind => 'index_entry', derived_from => ARRAY[b]);
    c := memtx.stage(t1, 'team', 'order:1', '"eligible"', kind => 'shared_copy', derived_from => ARRAY[b],
                     scope => 'shared', readers => ARRAY['regress_memtx_upgrade']);
    h := memtx.stage(t1, 'order:1', 'held', 'false', source => 'crm',
                     valid => tstzrange('2026-01-01', '2027-01-01'));
    PERFORM memtx.commit(t1);
    -- tool actions (tool_action kind): reversible with an effect key, and irreversible
    PERFORM memtx.read(t1, 'order:1', 'eligible');
    act := (memtx.act(t1, 'hold_order', '{"order": 1}', ARRAY[p], 'hold-1')).action_id;
    PERFORM memtx.act(t1, 'send_email', '{"to": "c1"}', ARRAY[b], 'email-1');
    -- action_safe: committed at the external_action tier
    t2 := memtx.begin('external_action');
    PERFORM memtx.stage(t2, 'order:2', 'eligible', 'true', source => 'ledger');
    PERFORM memtx.commit(t2);
    -- needs_review (quarantined) and superseded: rivals of equal authority, then resolve
    t3 := memtx.begin();
    PERFORM memtx.stage(t3, 'order:1', 'held', 'true', source => 'erp');
    PERFORM memtx.stage(t3, 'order:3', 'eligible', 'true', source => 'erp');
    PERFORM memtx.commit(t3);
    PERFORM memtx.resolve((SELECT id FROM memtx.records WHERE entity = 'order:1' AND attribute = 'held'
                             AND value = 'true'), true);
    -- revoked, with cascade repair: rollback log and a compensation obligation
    PERFORM memtx.revoke(b, 'lookup was wrong');
    -- an aborted transaction and an open one with tentative records and a read set
    t4 := memtx.begin();
    PERFORM memtx.stage(t4, 'order:4', 'eligible', 'true');
    PERFORM memtx.abort(t4);
    t5 := memtx.begin();
    PERFORM memtx.read(t5, 'order:2', 'eligible');
    PERFORM memtx.stage(t5, 'order:5', 'eligible', 'true');
END $$;

-- every state at rest, every kind, every table has rows
SELECT state, count(*) FROM memtx.records GROUP BY state ORDER BY state;
SELECT kind, count(*) FROM memtx.records GROUP BY kind ORDER BY kind;
SELECT status, count(*) FROM memtx.transactions GROUP BY status ORDER BY status;
CREATE FUNCTION pg_temp.store_tables() RETURNS SETOF regclass LANGUAGE sql AS $$
    SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'memtx' AND c.relkind = 'r' ORDER BY c.relname $$;
CREATE FUNCTION pg_temp.fingerprint(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT count(*) || '':'' || coalesce(md5(string_agg(x::text, ''|'' ORDER BY x::text)), '''')
                      FROM %s x', t) INTO r;
    RETURN r;
END $$;
CREATE TEMP TABLE before_update AS
    SELECT t::text AS tab, pg_temp.fingerprint(t) AS fp FROM pg_temp.store_tables() t;
SELECT tab, split_part(fp, ':', 1)::int > 0 AS has_rows FROM before_update ORDER BY tab;
CREATE TEMP TABLE seq_before AS
    SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'memtx';
SELECT count(*) AS invariant_violations FROM memtx.check_invariants();

-- ------------------------------------------------------------------ update
ALTER EXTENSION memtx UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'memtx';

-- every row is still there, unchanged, and the sequences continue
SELECT b.tab, b.fp = pg_temp.fingerprint(b.tab::regclass) AS unchanged
  FROM before_update b ORDER BY b.tab;
SELECT s.sequencename, s.last_value = b.last_value AS unchanged
  FROM pg_sequences s JOIN seq_before b USING (sequencename)
 WHERE s.schemaname = 'memtx' ORDER BY 1;
SELECT count(*) AS invariant_violations FROM memtx.check_invariants();

-- the store keeps working: the open transaction commits, a new one too, the gate answers
SELECT record_id, state FROM memtx.commit((SELECT id FROM memtx.transactions WHERE status = 'open'));
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'order:6', 'eligible', 'true') > (SELECT last_value FROM seq_before
                                                           WHERE sequencename = 'record_id_seq') AS new_id;
SELECT state, reason FROM memtx.commit(:tx);
SELECT allowed, reason FROM memtx.gate(:tx, 'send_email');
SELECT count(*) AS invariant_violations FROM memtx.check_invariants();

-- ------------------------------------------- upgraded catalog = fresh install
-- One line per catalog fact of the extension, with no OIDs in it.
CREATE FUNCTION pg_temp.catalog() RETURNS SETOF text LANGUAGE sql AS $$
    WITH ext AS (SELECT oid, extconfig, extcondition FROM pg_extension WHERE extname = 'memtx'),
    member AS (SELECT d.classid, d.objid FROM pg_depend d, ext
                WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e')
    SELECT 'member ' || pg_describe_object(classid, objid, 0) FROM member
    UNION ALL
    SELECT format('function %s returns %s lang %s secdef %s vol %s strict %s parallel %s config %s src %s bin %s acl %s comment %s',
                  p.oid::regprocedure, pg_get_function_result(p.oid), l.lanname, p.prosecdef, p.provolatile,
                  p.proisstrict, p.proparallel, p.proconfig, md5(p.prosrc), p.probin, p.proacl,
                  obj_description(p.oid, 'pg_proc'))
      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang JOIN member m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
    UNION ALL
    SELECT format('type %s %s labels %s comment %s', t.typname, t.typtype,
                  (SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid),
                  obj_description(t.oid, 'pg_type'))
      FROM pg_type t JOIN member m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
    UNION ALL
    SELECT format('relation %s kind %s acl %s rls %s force %s options %s comment %s', c.relname, c.relkind,
                  c.relacl, c.relrowsecurity, c.relforcerowsecurity, c.reloptions, obj_description(c.oid, 'pg_class'))
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'memtx'
    UNION ALL
    SELECT format('column %s.%s #%s %s notnull %s default %s identity %s generated %s acl %s comment %s',
                  c.relname, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated, a.attacl,
                  col_description(c.oid, a.attnum))
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
     WHERE n.nspname = 'memtx' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'index ' || pg_get_indexdef(i.indexrelid)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'memtx'
    UNION ALL
    SELECT format('constraint %s on %s: %s deferrable %s', co.conname, co.conrelid::regclass,
                  pg_get_constraintdef(co.oid), co.condeferrable)
      FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE n.nspname = 'memtx'
    UNION ALL
    SELECT 'trigger ' || pg_get_triggerdef(tg.oid)
      FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'memtx' AND NOT tg.tgisinternal
    UNION ALL
    SELECT format('policy %s on %s %s %s roles %s using %s check %s', policyname, tablename, permissive, cmd,
                  roles, qual, with_check)
      FROM pg_policies WHERE schemaname = 'memtx'
    UNION ALL
    SELECT format('view %s: %s', c.relname, md5(pg_get_viewdef(c.oid)))
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'memtx' AND c.relkind = 'v'
    UNION ALL
    SELECT format('sequence %s %s start %s min %s max %s inc %s cycle %s', sequencename, data_type, start_value,
                  min_value, max_value, increment_by, cycle)
      FROM pg_sequences WHERE schemaname = 'memtx'
    UNION ALL
    SELECT format('extconfig %s where %s', cfg::regclass, cond)
      FROM ext, unnest(ext.extconfig, ext.extcondition) AS u(cfg, cond)
    UNION ALL
    SELECT format('schema %s owner-is-extension-owner acl %s comment %s', n.nspname, n.nspacl,
                  obj_description(n.oid, 'pg_namespace'))
      FROM pg_namespace n WHERE n.nspname = 'memtx'
$$;
CREATE TEMP TABLE upgraded AS SELECT pg_temp.catalog() AS fact;
SELECT count(*) > 200 AS catalog_described FROM upgraded;
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
CREATE EXTENSION memtx;
CREATE TEMP TABLE fresh AS SELECT pg_temp.catalog() AS fact;
-- no fact of one that the other lacks
(SELECT 'only upgraded: ' || fact FROM upgraded EXCEPT ALL SELECT 'only upgraded: ' || fact FROM fresh)
UNION ALL
(SELECT 'only fresh: ' || fact FROM fresh EXCEPT ALL SELECT 'only fresh: ' || fact FROM upgraded)
ORDER BY 1;

-- a library refuses a catalog version it does not know, with 55000 and a hint
BEGIN;
UPDATE pg_extension SET extversion = '0.0.9' WHERE extname = 'memtx';
SELECT memtx.begin();
ROLLBACK;
SELECT memtx.begin() IS NOT NULL AS works_again;

SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_memtx_upgrade;
CREATE EXTENSION memtx;
