-- memtx.tool_specs with memtx_vector installed (SPEC §15, §19): memory_recall gains an optional
-- boolean `semantic`; runners holding an embedding model embed the query and call
-- memtx.recall_similar (hybrid with the text query).  Looked up at each call.
\i test/sql/include/prelude.psql
SELECT jsonb_object_keys(memtx.tool_specs()->0->'function'->'parameters'->'properties') AS without_vector ORDER BY 1;
SET client_min_messages = warning;
CREATE EXTENSION memtx_vector CASCADE;
RESET client_min_messages;
SELECT jsonb_object_keys(memtx.tool_specs()->0->'function'->'parameters'->'properties') AS with_vector ORDER BY 1;
-- the property, the same in every format; not required; the rest still mirrors memtx.recall
SELECT f, jsonb_path_query_first(memtx.tool_specs(f), '$[0].**.properties.semantic') AS semantic,
       jsonb_path_query_first(memtx.tool_specs(f), '$[0].**.required') AS required
  FROM unnest(ARRAY['openai', 'anthropic', 'mcp']) f;
SELECT (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(memtx.tool_specs()->0->'function'->'parameters'->'properties') k
         WHERE k <> 'semantic')
       = (SELECT array_agg(a ORDER BY a) FROM pg_proc p, unnest(p.proargnames[1:p.pronargs]) a
           WHERE p.oid = 'memtx.recall(bigint,text,integer,text,timestamptz)'::regprocedure AND a NOT IN ('tx', 'namespace')) AS mirrors_recall;
-- the other tools are unchanged
SELECT count(*) AS tools, count(*) FILTER (WHERE t->'function'->'parameters'->'properties' ? 'semantic') AS with_semantic
  FROM jsonb_array_elements(memtx.tool_specs()) t;
-- and it goes with memtx_vector
SET client_min_messages = warning;
DROP EXTENSION memtx_vector CASCADE;
RESET client_min_messages;
SELECT memtx.tool_specs()->0->'function'->'parameters'->'properties' ? 'semantic' AS semantic_after_drop;
SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
