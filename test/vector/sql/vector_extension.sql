-- memtx_vector (SPEC §19) is a companion extension: memtx works without it, it requires memtx
-- and pgvector's vector (>= 0.8.0), and it adds its objects to memtx's schema.
\i test/sql/include/prelude.psql
-- memtx alone, without pgvector: a store that works (the other files of the suite leave
-- vector installed, as dropping memtx does)
DROP EXTENSION IF EXISTS vector;
SELECT extname FROM pg_extension WHERE extname IN ('memtx', 'memtx_vector', 'vector', 'btree_gist') ORDER BY 1;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'a', 'b', '1') AS r \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT count(*) AS recalled FROM memtx.recall(memtx.begin(), 'a');
SELECT jsonb_array_length(memtx.tool_specs()) AS tools;
SELECT count(*) AS memtx_triggers FROM pg_trigger WHERE tgrelid = 'memtx.records'::regclass AND NOT tgisinternal \gset
-- pgvector's version is at least 0.8.0 (iterative index scans)
SELECT string_to_array(default_version, '.')::int[] >= '{0,8,0}' AS vector_recent_enough
  FROM pg_available_extensions WHERE name = 'vector';

SET client_min_messages = warning;
CREATE EXTENSION memtx_vector CASCADE;
RESET client_min_messages;
SELECT e.extname, e.extversion, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname IN ('memtx', 'memtx_vector', 'vector') ORDER BY 1;
-- memtx_vector requires memtx and vector
SELECT r.extname AS requires FROM pg_depend d JOIN pg_extension e ON e.oid = d.objid JOIN pg_extension r ON r.oid = d.refobjid
 WHERE d.classid = 'pg_extension'::regclass AND d.refclassid = 'pg_extension'::regclass AND e.extname = 'memtx_vector'
 ORDER BY 1;
-- its members: in schema memtx, the functions C in memtx's module
SELECT pg_describe_object(d.classid, d.objid, 0) AS member
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
 WHERE e.extname = 'memtx_vector' AND d.deptype = 'e' ORDER BY 1;
SELECT p.oid::regprocedure AS c_function, p.probin, p.prosrc
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'memtx'::regnamespace AND l.lanname = 'c'
   AND p.oid IN (SELECT d.objid FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
                  WHERE e.extname = 'memtx_vector' AND d.deptype = 'e')
 ORDER BY 1;
-- the triggers it puts on memtx.records
SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger
 WHERE tgrelid = 'memtx.records'::regclass AND tgfoid::regproc::text LIKE 'memtx.embeddings%' ORDER BY 1;

-- dropping it needs CASCADE (its triggers on memtx.records depend on its functions), and
-- takes exactly them with it: memtx and its records stay
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'a', 'c', '1') AS r2 \gset
SELECT pg_temp.try('DROP EXTENSION memtx_vector');
SET client_min_messages = warning;
DROP EXTENSION memtx_vector CASCADE;
RESET client_min_messages;
SELECT extname FROM pg_extension WHERE extname LIKE 'memtx%' ORDER BY 1;
SELECT count(*) = :memtx_triggers AS memtx_triggers_kept FROM pg_trigger WHERE tgrelid = 'memtx.records'::regclass AND NOT tgisinternal;
SELECT record_id, state FROM memtx.commit(:tx);
SELECT to_regclass('memtx.embeddings') IS NULL AS no_embeddings_table;
-- and it comes back
SET client_min_messages = warning;
CREATE EXTENSION memtx_vector;
RESET client_min_messages;
SELECT memtx.register_embedding_model('m', 2);
SELECT memtx.embed(:r, 'm', '[1,2]');
SELECT memtx.embed(:r2, 'm', '[2,1]');
SELECT record_id, model, embedding FROM memtx.embeddings ORDER BY record_id;
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
