-- memtx.register_embedding_model (SPEC §19): a harness declares a model (name, dimensions,
-- distance) and gets its HNSW index; the same registration again does nothing, another is 23505.
\i test/vector/sql/include/prelude.psql
CREATE ROLE regress_vmodel_agent;

-- the three distances, each with its operator class; cosine is the default
SELECT memtx.register_embedding_model('text-embedding-3-small', 1536);
SELECT memtx.register_embedding_model('clip:vit.b-32', 512, 'l2');
SELECT memtx.register_embedding_model('dot_64', 64, 'inner_product');
SELECT name, dims, distance FROM memtx.embedding_models ORDER BY name;
-- one partial HNSW index per model: the embedding cast to the model's dimensions, WHERE model = it
SELECT m.name, i.indexname = memtx.embedding_index_name(m.name) AS named, i.indexdef
  FROM memtx.embedding_models m JOIN pg_indexes i ON i.indexname = memtx.embedding_index_name(m.name)
 ORDER BY m.name;

-- the same registration again does nothing (no second index, the row unchanged)
SELECT registered_at AS first_at FROM memtx.embedding_models WHERE name = 'dot_64' \gset
SELECT memtx.register_embedding_model('dot_64', 64, 'inner_product');
SELECT registered_at = :'first_at' AS unchanged FROM memtx.embedding_models WHERE name = 'dot_64';
SELECT count(*) AS hnsw_indexes FROM pg_indexes WHERE tablename = 'embeddings' AND indexdef LIKE '%USING hnsw%';
-- other dimensions or another distance: 23505, naming what is registered
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''dot_64'', 65, ''inner_product'')');
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''dot_64'', 64)');
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''dot_64'', 64, ''l2'')');

-- a harness operation: anyone else gets 42501, before any other check
SET ROLE regress_vmodel_agent;
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''mine'', 8)');
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''bad name'', 0, ''dot'')');
SELECT count(*) AS models_visible_to_all FROM memtx.embedding_models;
RESET ROLE;
-- and a member of the harness role may
CREATE ROLE regress_vmodel_harnesses;
CREATE ROLE regress_vmodel_harness IN ROLE regress_vmodel_harnesses;
SET memtx.harness_role = 'regress_vmodel_harnesses';
SET ROLE regress_vmodel_harness;
SELECT memtx.register_embedding_model('by_harness', 8);
RESET ROLE;
RESET memtx.harness_role;

-- bad arguments: NULLs 22004; names as for tools, with '.' and ':' (22023); dims 1..2000
-- (22003: pgvector's HNSW index takes at most 2000); distance cosine, l2 or inner_product (22023)
SELECT pg_temp.try('SELECT memtx.register_embedding_model(NULL, 8)');
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''x'', NULL)');
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''x'', 8, NULL)');
SELECT left(n, 20) AS name, length(n), pg_temp.try(format('SELECT memtx.register_embedding_model(%L, 4)', n)) AS outcome
  FROM unnest(ARRAY['', 'a b', 'naïve', 'x/y', 'x''y', 'x"y', repeat('x', 65), 'a;b', E'x\n']) n;
SELECT pg_temp.try(format('SELECT memtx.register_embedding_model(%L, 4)', n)) AS accepted
  FROM unnest(ARRAY[repeat('x', 64), 'A-Z.a_z:0-9', '-', '.']) n;
SELECT d, pg_temp.try(format('SELECT memtx.register_embedding_model(''dims_%s'', %s)', abs(d), d)) AS outcome
  FROM unnest(ARRAY[0, -1, 2001, 2147483647, 1, 2000]) d;
SELECT pg_temp.try(format('SELECT memtx.register_embedding_model(''dist'', 4, %L)', d)) AS outcome
  FROM unnest(ARRAY['dot', 'COSINE', 'cosine ', '', 'euclidean']) d;
-- errors write nothing: only the accepted names are registered
SELECT name, dims, distance FROM memtx.embedding_models ORDER BY name COLLATE "C";
SELECT count(*) = (SELECT count(*) FROM memtx.embedding_models) AS one_index_per_model
  FROM pg_indexes WHERE tablename = 'embeddings' AND indexdef LIKE '%USING hnsw%';

-- REPEATABLE READ is refused, as for every memtx call that writes
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.try('SELECT memtx.register_embedding_model(''rr'', 4)');
ROLLBACK;

-- the registry's trigger builds the index of a row that arrives without the API too
-- (pg_restore loads the registry but recreates no index of an extension's table) ...
DO $$ BEGIN EXECUTE format('DROP INDEX memtx.%I', memtx.embedding_index_name('by_harness')); END $$;
SELECT count(*) AS gone FROM pg_indexes WHERE indexname = memtx.embedding_index_name('by_harness');
DELETE FROM memtx.embedding_models WHERE name = 'by_harness';
INSERT INTO memtx.embedding_models (name, dims, distance) VALUES ('by_harness', 8, 'cosine');
SELECT indexdef FROM pg_indexes WHERE indexname = memtx.embedding_index_name('by_harness');
-- ... and a model's row, deleted while it has no embeddings, takes its index along, so the
-- name can be registered afresh; with embeddings it stays, and no model ever changes
DELETE FROM memtx.embedding_models WHERE name = 'by_harness';
SELECT count(*) AS index_left FROM pg_indexes WHERE indexname = memtx.embedding_index_name('by_harness');
SELECT memtx.register_embedding_model('by_harness', 16, 'l2');
SELECT indexdef FROM pg_indexes WHERE indexname = memtx.embedding_index_name('by_harness');
SELECT memtx.begin() AS tx \gset
SELECT memtx.embed(memtx.stage(:tx, 'a', 'b', '1'), 'dims_1', '[1]');
SELECT pg_temp.try('DELETE FROM memtx.embedding_models WHERE name = ''dims_1''');
SELECT pg_temp.try('TRUNCATE memtx.embedding_models');
SELECT pg_temp.try('UPDATE memtx.embedding_models SET dims = 2 WHERE name = ''dims_2000''');
SELECT pg_temp.try('UPDATE memtx.embedding_models SET name = ''renamed'' WHERE name = ''dims_2000''');
UPDATE memtx.embedding_models SET registered_at = registered_at WHERE name = 'dims_2000';

SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_vmodel_agent;
DROP ROLE regress_vmodel_harness;
DROP ROLE regress_vmodel_harnesses;
