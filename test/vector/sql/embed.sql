-- memtx.embed (SPEC §19): the record's owner (or a harness) attaches one embedding per
-- (record, model), in any state but erased; dims checked, immutable, readable only under the
-- record's own row-level security; errors write nothing.
\i test/vector/sql/include/prelude.psql
\i test/sql/include/fails.psql
CREATE ROLE regress_embed_a;
CREATE ROLE regress_embed_b;
SELECT memtx.register_embedding_model('m3', 3);
SELECT memtx.register_embedding_model('m3_l2', 3, 'l2');

-- records of a (private, one shared with b), and of b; every state but erased may be embedded
SELECT memtx.begin(agent => 'regress_embed_a', tier => 'low') AS tx \gset
SET ROLE regress_embed_a;
SELECT memtx.stage(:tx, 'doc:1', 'text', '"private to a"') AS a1 \gset
SELECT memtx.stage(:tx, 'doc:2', 'text', '"shared with b"', readers => ARRAY['regress_embed_b']) AS a2 \gset
SELECT memtx.stage(:tx, 'doc:3', 'text', '"weak"', confidence => 0.1) AS a3 \gset
-- tentative: embedded before commit
SELECT memtx.embed(:a1, 'm3', '[1,0,0]');
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.embed(:a2, 'm3', '[0,1,0]');
SELECT memtx.embed(:a3, 'm3', '[0,0,1]');    -- quarantined
SELECT memtx.begin() AS tx2 \gset
SELECT memtx.stage(:tx2, 'doc:4', 'text', '"withdrawn"') AS a4 \gset
SELECT record_id, state FROM memtx.commit(:tx2);
SELECT count(*) FROM memtx.revoke(:a4);
SELECT memtx.embed(:a4, 'm3', '[1,1,0]');    -- revoked
RESET ROLE;
SELECT memtx.begin(agent => 'regress_embed_b', tier => 'low') AS txb \gset
SET ROLE regress_embed_b;
SELECT memtx.stage(:txb, 'doc:5', 'text', '"b''s own"') AS b1 \gset
SELECT record_id, state FROM memtx.commit(:txb);
RESET ROLE;
SELECT r.id, r.state, e.model, e.embedding FROM memtx.records r LEFT JOIN memtx.embeddings e ON e.record_id = r.id
 ORDER BY r.id, e.model;

-- the same vector again does nothing; another is 23505 (an embedding is immutable)
SET ROLE regress_embed_a;
SELECT embedded_at AS first_at FROM memtx.embeddings WHERE record_id = :a1 \gset
SELECT memtx.embed(:a1, 'm3', '[1,0,0]');
SELECT memtx.embed(:a1, 'm3', '[1.0,0.0,-0.0]');
SELECT count(*), min(embedded_at) = :'first_at' AS unchanged FROM memtx.embeddings WHERE record_id = :a1;
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a1, 'm3', '[1,0,0.001]'));
-- one per (record, model): the same record under another model is another embedding
SELECT memtx.embed(:a1, 'm3_l2', '[0,0,0]');    -- l2 takes the zero vector
SELECT record_id, model, embedding FROM memtx.embeddings WHERE record_id = :a1 ORDER BY model;

-- who may: the owner or a harness.  b may read a2 but does not own it (42501); b may not
-- read a1: the same error as a record that does not exist (42704)
SET ROLE regress_embed_b;
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a2, 'm3_l2', '[1,2,3]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a1, 'm3_l2', '[1,2,3]'));
SELECT pg_temp.fails('SELECT memtx.embed(999999, ''m3_l2'', ''[1,2,3]'')');
SELECT memtx.embed(:b1, 'm3', '[0,1,1]');
RESET ROLE;
SELECT memtx.embed(:a2, 'm3_l2', '[1,2,3]');    -- a harness, for a's record

-- row-level security: each role reads the embeddings of the records it may read
SET ROLE regress_embed_a;
SELECT record_id, model FROM memtx.embeddings ORDER BY record_id, model;
SET ROLE regress_embed_b;
SELECT record_id, model FROM memtx.embeddings ORDER BY record_id, model;
RESET ROLE;

-- bad arguments (22004 NULLs, 42704 unknown model, 22023 dimensions and the zero vector of a
-- cosine model), checked before the record; pgvector itself refuses non-finite elements
SELECT count(*) AS embeddings_before FROM memtx.embeddings \gset
SET ROLE regress_embed_a;
SELECT pg_temp.fails(format('SELECT memtx.embed(NULL, %L, %L)', 'm3', '[1,2,3]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, NULL, %L)', :a1, '[1,2,3]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, NULL)', :a1, 'm3'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a1, 'no_such_model', '[1,2,3]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a2, 'm3', '[1,2]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a2, 'm3', '[1,2,3,4]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a4, 'm3_l2', '[1,2]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', 999999, 'm3', '[0,0,0]')) AS cosine_zero;
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a1, 'm3', '[NaN,0,1]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :a1, 'm3', '[Infinity,0,1]'));
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L::vector * %L::vector)', :a1, 'm3', '[1e38,1,1]', '[1e38,1,1]'));
RESET ROLE;
-- REPEATABLE READ is refused
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :b1, 'm3_l2', '[1,2,3]'));
ROLLBACK;
-- a fenced role writes nothing, embeddings included
SELECT memtx.fence('regress_embed_b');
SET ROLE regress_embed_b;
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :b1, 'm3_l2', '[1,2,3]'));
RESET ROLE;
SELECT memtx.unfence('regress_embed_b');
SELECT count(*) - :embeddings_before AS written_by_failed_calls FROM memtx.embeddings;

-- embeddings are immutable and name an existing record of their namespace and a registered
-- model, behind the API too; a record with embeddings cannot be deleted
SELECT pg_temp.fails(format('UPDATE memtx.embeddings SET embedding = %L WHERE record_id = %s AND model = %L', '[0,0,1]', :a1, 'm3'));
SELECT pg_temp.fails(format('UPDATE memtx.embeddings SET namespace = %L WHERE record_id = %s', 'other', :a1));
SELECT pg_temp.fails('INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) VALUES (999999, ''default'', ''m3'', ''[1,2,3]'')');
SELECT pg_temp.fails(format('INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) VALUES (%s, %L, %L, %L)', :b1, 'other', 'm3_l2', '[1,2,3]'));
SELECT pg_temp.fails(format('INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) VALUES (%s, %L, %L, %L)', :b1, 'default', 'nope', '[1,2,3]'));
-- (the model's index refuses a vector of other dimensions)
SELECT pg_temp.fails(format('INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) VALUES (%s, %L, %L, %L)', :b1, 'default', 'm3_l2', '[1,2]'));
SELECT pg_temp.fails(format('DELETE FROM memtx.records WHERE id = %s', :b1));
SELECT pg_temp.fails('TRUNCATE memtx.records CASCADE');
-- no role but the owner writes the table
SET ROLE regress_embed_a;
SELECT pg_temp.fails(format('INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) VALUES (%s, %L, %L, %L)', :a2, 'default', 'm3_l2', '[1,2,3]'));
SELECT pg_temp.fails(format('DELETE FROM memtx.embeddings WHERE record_id = %s', :a1));
RESET ROLE;
SELECT count(*) - :embeddings_before AS written_behind_the_api FROM memtx.embeddings;

SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_embed_a;
DROP ROLE regress_embed_b;
