-- memtx_vector's part of the dump/restore round trip (test/dump/run.sh with MEMTX_DUMP_VECTOR=1),
-- after test/dump/populate.sql: two models, an embedding of every record under the first,
-- of every other under the second; then the first record erased (its embeddings go).
SET client_min_messages = warning;
CREATE EXTENSION memtx_vector CASCADE;
SELECT memtx.register_embedding_model('dump3', 3);
SELECT memtx.register_embedding_model('dump:l2', 3, 'l2');
SELECT count(memtx.embed(r.id, 'dump3', format('[%s,%s,1]', cos(r.id), sin(r.id))::vector))
  FROM memtx.records r WHERE r.erased_at IS NULL;
SELECT count(memtx.embed(r.id, 'dump:l2', format('[%s,0,0]', r.id)::vector))
  FROM memtx.records r WHERE r.erased_at IS NULL AND r.id % 2 = 0;
SELECT count(*) FROM memtx.erase((SELECT min(r.id) FROM memtx.records r WHERE r.erased_at IS NULL), 'dump test');
