-- Probes write nothing (SPEC §16): gate never writes, not even to renew a
-- lease, and runs in a READ ONLY transaction; read writes only its read set
-- (renewing a due lease then, as it writes anyway), and in a READ ONLY
-- transaction writes nothing at all: what it returns still joins the read
-- set, through the shared buffer that commit drains (readset.c).
\i test/sql/include/prelude.psql
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.begin() AS t1 \gset
SELECT memtx.stage(:t1, 'order:1', 'eligible', 'true');
SELECT record_id, state FROM memtx.commit(:t1);
SELECT memtx.begin() AS t2 \gset
-- t2's lease is due for renewal: one minute left of five
UPDATE memtx.transactions SET lease_expires_at = clock_timestamp() + interval '60 s' WHERE id = :t2;
CREATE TEMP TABLE lease_before AS
SELECT xmin::text AS row_version, lease_expires_at FROM memtx.transactions WHERE id = :t2;
CREATE FUNCTION pg_temp.untouched(tx bigint) RETURNS TABLE (same_row_version boolean, same_lease boolean)
LANGUAGE sql AS $$
  SELECT t.xmin::text = b.row_version, t.lease_expires_at = b.lease_expires_at
    FROM memtx.transactions t, lease_before b WHERE t.id = tx $$;

-- READ ONLY: the gate, and a read that returns nothing, answer and write nothing
BEGIN READ ONLY;
SELECT * FROM memtx.gate(:t2, 'issue_refund');
SELECT * FROM memtx.gate(:t2, 'unregistered_tool');
SELECT count(*) FROM memtx.read(:t2, 'order:2', 'eligible');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT * FROM pg_temp.untouched(:t2);

-- a read that returns a record in a READ ONLY transaction writes nothing either
BEGIN READ ONLY;
SELECT count(*) FROM memtx.read(:t2, 'order:1', 'eligible');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT count(*) AS read_set FROM memtx.read_set WHERE tx_id = :t2;
SELECT * FROM pg_temp.untouched(:t2);

-- read-write: the gate still writes nothing, however often it is polled
BEGIN;
SELECT * FROM memtx.gate(:t2, 'issue_refund');
SELECT * FROM memtx.gate(:t2, 'issue_refund');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT * FROM pg_temp.untouched(:t2);

-- a read that adds to the read set writes anyway, and renews the due lease
SELECT count(*) FROM memtx.read(:t2, 'order:1', 'eligible');
SELECT array_agg(record_id) AS read_set FROM memtx.read_set WHERE tx_id = :t2;
SELECT t.lease_expires_at > b.lease_expires_at + interval '3 min' AS renewed
  FROM memtx.transactions t, lease_before b WHERE t.id = :t2;

-- a probe still checks the lease (a check, not a write): once it ran out the
-- gate fails, in a READ ONLY transaction too
UPDATE memtx.transactions SET lease_expires_at = clock_timestamp() - interval '1 s' WHERE id = :t2;
BEGIN READ ONLY;
SELECT pg_temp.try(format('SELECT * FROM memtx.gate(%s, ''issue_refund'')', :t2));
SELECT pg_temp.try(format('SELECT count(*) FROM memtx.read(%s)', :t2));
ROLLBACK;

-- what a READ ONLY read returned counts at commit: transcribing it into a
-- public record is laundering
SELECT memtx.begin() AS t3 \gset
BEGIN READ ONLY;
SELECT value FROM memtx.read(:t3, 'order:1', 'eligible');
COMMIT;
SELECT memtx.stage(:t3, 'order:1', 'eligible_copy', 'true', scope => 'public') > 0 AS staged;
SELECT record_id > 0 AS ok, state, reason FROM memtx.commit(:t3);
SELECT count(*) AS read_set FROM memtx.read_set WHERE tx_id = :t3;
