-- The durable read set across DROP EXTENSION and CREATE EXTENSION: the shared buffer of lost
-- reads outlives the store, whose transaction ids restart, so a new transaction must not
-- inherit the lost reads of the old one that had its id.
\i test/sql/include/prelude.psql
SELECT memtx.begin() AS old_tx \gset
SELECT memtx.stage(:old_tx, 'secret', 'x', '1') AS old_record;
SELECT count(*) FROM memtx.commit(:old_tx);
SELECT memtx.begin() AS reader \gset
-- a read whose SQL transaction rolls back is kept in the shared buffer for transaction :reader
BEGIN;
SELECT count(*) AS read FROM memtx.read(:reader);
ROLLBACK;
-- the store goes, and a new one starts its ids again
DROP EXTENSION memtx CASCADE;
CREATE EXTENSION memtx;
SELECT memtx.begin() AS tx1 \gset
SELECT memtx.begin() AS tx2 \gset
SELECT :tx2 = :reader AS same_id_as_the_old_reader;
SELECT memtx.stage(:tx1, 'private', 'z', '3') AS private_record;
SELECT record_id, state FROM memtx.commit(:tx1);
-- tx2 read nothing: its public record is no transcription of record 1
SELECT memtx.stage(:tx2, 'note', 'y', '2', scope => 'public') AS public_record;
SELECT record_id, state, reason FROM memtx.commit(:tx2);
SELECT count(*) AS read_set_rows FROM memtx.read_set;
-- while a lost read of a live transaction is still kept (memtx.read_durable tests the rest)
SELECT memtx.begin() AS tx \gset
BEGIN;
SELECT count(*) AS read FROM memtx.read(:tx);
ROLLBACK;
SELECT memtx.stage(:tx, 'copy', 'z', '3', scope => 'public') AS copy;
SELECT record_id, state, reason FROM memtx.commit(:tx);
DROP EXTENSION memtx CASCADE;
