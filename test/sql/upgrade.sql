-- Upgrades: the catalog an ALTER EXTENSION memtx UPDATE leaves equals a
-- fresh install's, and the library refuses a catalog it cannot run over.
-- (The data a 0.1.0 store holds survives the update: test/t/006_upgrade.pl,
-- which populates it with the 0.1.0 library.)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS memtx CASCADE;
RESET client_min_messages;

CREATE EXTENSION memtx VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'memtx';
-- this library does not run over a 0.1.0 catalog: 55000 with a hint, nothing written
SELECT memtx.begin();
SELECT count(*) AS transactions FROM memtx.transactions;
ALTER EXTENSION memtx UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'memtx';
SELECT memtx.begin() IS NOT NULL AS works_after_update;
-- a catalog version the library has never heard of is refused the same way
BEGIN;
UPDATE pg_extension SET extversion = '9.9.9' WHERE extname = 'memtx';
SELECT memtx.begin();
ROLLBACK;

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

SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
CREATE EXTENSION memtx;
