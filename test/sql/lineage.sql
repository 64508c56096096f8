-- memtx.lineage and memtx.lineage_dot (SPEC §9, §17): DAG walks down and up, through restored copies too.
\i test/sql/include/prelude.psql

SELECT memtx.register_tool('issue_refund', false);
-- a diamond with a shortcut, a second root, and an unrelated record r7:
--   r1 -> r2, (r1, r6) -> r3, (r2, r3) -> r4 summary, (r4, r1) -> r5 profile -> action
SELECT memtx.begin('medium') AS t \gset
SELECT memtx.stage(:t, 'order:841', 'refund_eligible', 'true') AS r1 \gset
SELECT memtx.stage(:t, 'order:841', 'amount', '20', derived_from => ARRAY[:r1]) AS r2 \gset
SELECT memtx.stage(:t, 'customer:7', 'tier', '"gold"') AS r6 \gset
SELECT memtx.stage(:t, 'order:841', 'priority', '"high"', derived_from => ARRAY[:r1, :r6]) AS r3 \gset
SELECT memtx.stage(:t, 'order:841', 'digest', '"refund 20, high"', kind => 'summary', derived_from => ARRAY[:r2, :r3]) AS r4 \gset
SELECT memtx.stage(:t, 'customer:7', 'profile', '{"refunds": 1}', kind => 'profile', derived_from => ARRAY[:r4, :r1]) AS r5 \gset
SELECT memtx.stage(:t, 'order:999', 'unrelated', 'true') AS r7 \gset
SELECT record_id, state FROM memtx.commit(:t);
SELECT (memtx.act(:t, 'issue_refund', '{"order": 841}', ARRAY[:r5])).action_id AS a \gset

-- down (the default): every descendant once, at its shortest depth
SELECT * FROM memtx.lineage(:r1);
SELECT * FROM memtx.lineage(:r1, 'down');
-- up: every ancestor once
SELECT record_id, depth, parent_ids, kind, state FROM memtx.lineage(:a, 'up');
-- a record with no edges is its own lineage
SELECT record_id, depth, parent_ids FROM memtx.lineage(:r7);
SELECT record_id, depth, parent_ids FROM memtx.lineage(:r7, 'up');

-- states follow the store: after a revocation the walk shows the repair
SELECT count(*) FROM memtx.revoke(:r2);
SELECT record_id, depth, kind, state FROM memtx.lineage(:r1);

-- DOT: ancestors and descendants of a record, the record in bold, edges among them
SELECT memtx.lineage_dot(:r3);
SELECT memtx.lineage_dot(:r7);

-- bad input
SELECT pg_temp.try('SELECT * FROM memtx.lineage(NULL)');
SELECT pg_temp.try(format('SELECT * FROM memtx.lineage(%s, NULL)', :r1));
SELECT pg_temp.try(format('SELECT * FROM memtx.lineage(%s, %L)', :r1, 'sideways'));
SELECT pg_temp.try('SELECT * FROM memtx.lineage(424242)');
SELECT pg_temp.try('SELECT memtx.lineage_dot(424242)');
SELECT pg_temp.try('SELECT memtx.lineage_dot(NULL)');
-- quotes and backslashes in names are escaped in labels
SELECT memtx.begin('low') AS t2 \gset
SELECT memtx.stage(:t2, 'say "hi"', 'back\slash', '1') AS q \gset
SELECT memtx.lineage_dot(:q);
SELECT count(*) FROM memtx.abort(:t2);

-- SPEC §17: lineage walks restored_from as well as derivation edges, and says how it reached
-- each record (via: derived_from or restored_from; derived_from when both reach it at its
-- depth; NULL for the record itself).  p, then a derived from p; c restored from p (a copy,
-- with no edge); r derived from a and c.
SET memtx.logical_now = '2031-01-01 00:00+00';
SELECT memtx.begin('medium') AS t3 \gset
SELECT memtx.stage(:t3, 'order:1000', 'status', '"open"') AS p \gset
SELECT memtx.stage(:t3, 'order:1000', 'open_since', '"2031"', derived_from => ARRAY[:p]) AS a \gset
SELECT count(*) FROM memtx.commit(:t3);
SET memtx.logical_now = '2031-01-02 00:00+00';
SELECT memtx.begin('medium') AS t4 \gset
SELECT memtx.restore(:t4, 'order:1000', 'status', '2031-01-01 12:00+00') AS c \gset
SELECT memtx.stage(:t4, 'order:1000', 'summary', '"open since 2031"', kind => 'summary', derived_from => ARRAY[:a, :c]) AS r \gset
SELECT count(*) FROM memtx.commit(:t4);
RESET memtx.logical_now;
SELECT record_id IN (:p, :a, :c, :r) AS known, record_id = :c AS is_c, depth, parent_ids = ARRAY[:a, :c]::bigint[] AS from_a_c,
       kind, state, via
  FROM memtx.lineage(:p);
-- going up, the original of a copy is reached through restored_from; p is reached at depth 2
-- both ways (from a by an edge, from c as its original): derived_from
SELECT record_id = :p AS is_p, record_id = :c AS is_c, depth, via FROM memtx.lineage(:r, 'up');
SELECT record_id = :p AS is_p, depth, parent_ids, via FROM memtx.lineage(:c, 'up');
SELECT record_id = :c AS is_c, record_id = :r AS is_r, depth, via FROM memtx.lineage(:c);
-- DOT: the copy hangs from its original on a dashed edge
SELECT memtx.lineage_dot(:c);
