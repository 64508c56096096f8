-- Erasure deletes embeddings (SPEC §13, §17, §19): memtx.erase removes the embeddings of every
-- record it erases (a trigger of memtx_vector on memtx.records: memtx's C knows nothing of
-- embeddings), and an erased record takes no new one.
\i test/vector/sql/include/prelude.psql
\i test/sql/include/fails.psql
CREATE ROLE regress_verase_a;
SELECT memtx.register_embedding_model('m2', 2);
SELECT memtx.register_embedding_model('m2_l2', 2, 'l2');

SELECT memtx.begin(agent => 'regress_verase_a', tier => 'low') AS tx \gset
SET ROLE regress_verase_a;
SELECT memtx.stage(:tx, 'cust:1', 'card', '"4111 swordfish"', scope => 'public') AS s \gset
SELECT memtx.stage(:tx, 'cust:1', 'note', '"derived"', scope => 'public', derived_from => ARRAY[:s]) AS d \gset
SELECT memtx.stage(:tx, 'cust:2', 'card', '"5500 marlin"', scope => 'public') AS o \gset
SELECT record_id, state FROM memtx.commit(:tx);
SELECT memtx.embed(:s, 'm2', '[1,0]'), memtx.embed(:s, 'm2_l2', '[1,0]'),
       memtx.embed(:d, 'm2', '[1,1]'), memtx.embed(:o, 'm2', '[0,1]');
RESET ROLE;
SELECT record_id, model FROM memtx.embeddings ORDER BY record_id, model;
-- the secret's neighbours, before
SELECT memtx.begin(agent => 'regress_verase_a', tier => 'low') AS reader \gset
SELECT record_id, distance FROM memtx.recall_similar(:reader, '[1,0]', 'm2', 3);

-- erase: the record's embeddings under every model go; the descendant (revoked by the
-- cascade) and the other record keep theirs
SELECT record_id, action, reason FROM memtx.erase(:s, 'request 9') ORDER BY id;
SELECT record_id, model FROM memtx.embeddings ORDER BY record_id, model;
SELECT id, value, erased_at IS NOT NULL AS erased, state FROM memtx.records ORDER BY id;
-- an erased record takes no embedding (55000), even from a harness
SELECT pg_temp.fails(format('SELECT memtx.embed(%s, %L, %L)', :s, 'm2', '[1,0]'));
-- erasing again writes nothing
SELECT count(*) AS rows FROM memtx.erase(:s);

-- a record erased behind the API (a superuser setting erased_at with the value): the
-- trigger follows the column, whoever writes it
SELECT memtx.embed(:o, 'm2_l2', '[0,1]');
UPDATE memtx.records SET value = 'null', erased_at = memtx.now() WHERE id = :o;
SELECT record_id, model FROM memtx.embeddings ORDER BY record_id, model;
-- a change of anything else leaves them: a record's other updates never touch embeddings
SELECT memtx.begin(agent => 'regress_verase_a', tier => 'low') AS tx \gset
SET ROLE regress_verase_a;
SELECT memtx.stage(:tx, 'cust:3', 'card', '"kept"') AS k \gset
SELECT memtx.embed(:k, 'm2', '[1,1]');
SELECT record_id, state FROM memtx.commit(:tx);
SELECT count(*) FROM memtx.revoke(:k);
RESET ROLE;
SELECT record_id, model FROM memtx.embeddings WHERE record_id = :k;

SET client_min_messages = warning;
DROP EXTENSION memtx CASCADE;
RESET client_min_messages;
DROP ROLE regress_verase_a;
