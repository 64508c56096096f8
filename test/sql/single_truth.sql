-- Single truth: no two active records on one slot with overlapping validity
-- and different values, held by an exclusion constraint.
\i test/sql/include/prelude.psql

-- a transaction in each namespace the records below are written to (a
-- record's transaction is of its namespace)
INSERT INTO memtx.transactions (id, agent, tier, isolation, namespace, snapshot, snapshot_xid, snapshot_seq, lease_expires_at)
SELECT n, current_user, 'medium', 'verified_read', ns, pg_current_snapshot(), pg_current_xact_id(), 0, now() + interval '1 hour'
  FROM unnest(ARRAY['default', 'tenant-b', 'x', 'xa']) WITH ORDINALITY AS u(ns, n);
CREATE FUNCTION pg_temp.rec(id bigint, ent text, val jsonb, st memtx.state, v tstzrange DEFAULT '(,)', ns text DEFAULT 'default')
RETURNS text LANGUAGE sql AS $$
  SELECT pg_temp.try(format(
    'INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, state, authority, confidence, owner, valid, staged_xid, staged_pos)
     VALUES (%s, %s, %L, %L, ''status'', %L, %L, 0.5, 1, current_user, %L, pg_current_xact_id(), %s)',
    id, (SELECT t.id FROM memtx.transactions t WHERE t.namespace = ns), ns, ent, val, st, v, id))
$$;

SELECT pg_temp.rec(1, 'order:841', '"eligible"', 'committed');
-- a second active value on the slot is refused, whether committed or action_safe
SELECT pg_temp.rec(2, 'order:841', '"ineligible"', 'committed');
SELECT pg_temp.rec(3, 'order:841', '"ineligible"', 'action_safe');
-- the same value corroborates
SELECT pg_temp.rec(4, 'order:841', '"eligible"', 'committed');
-- numbers compare by canonical text: 1 and 1.0 differ
SELECT pg_temp.rec(5, 'n', '1', 'committed');
SELECT pg_temp.rec(6, 'n', '1.0', 'committed');
SELECT pg_temp.rec(7, 'n', '1', 'action_safe');
-- object key order is canonical in jsonb, so these are the same value
SELECT pg_temp.rec(8, 'o', '{"a":1,"b":2}', 'committed');
SELECT pg_temp.rec(9, 'o', '{"b":2,"a":1}', 'committed');
-- inactive rivals are fine
SELECT pg_temp.rec(10, 'order:841', '"ineligible"', 'tentative');
SELECT pg_temp.rec(11, 'order:841', '"ineligible"', 'superseded');
SELECT pg_temp.rec(12, 'order:841', '"ineligible"', 'quarantined');
-- disjoint validity is fine, overlapping is not
SELECT pg_temp.rec(13, 'price', '10', 'committed', '[2030-01-01,2030-02-01)');
SELECT pg_temp.rec(14, 'price', '12', 'committed', '[2030-02-01,2030-03-01)');
SELECT pg_temp.rec(15, 'price', '11', 'committed', '[2030-01-15,2030-01-20)');
-- other namespaces are other slots
SELECT pg_temp.rec(16, 'order:841', '"ineligible"', 'committed', '(,)', 'tenant-b');
-- promoting a rival to active through UPDATE is refused as well
SELECT pg_temp.try('UPDATE memtx.records SET state = ''validated'' WHERE id = 10');
SELECT pg_temp.try('UPDATE memtx.records SET state = ''committed'' WHERE id = 10');
-- after the incumbents are superseded, the rival may commit
UPDATE memtx.records SET state = 'superseded' WHERE id IN (1, 4);
SELECT pg_temp.try('UPDATE memtx.records SET state = ''committed'' WHERE id = 10');
SELECT id, entity, value, state FROM memtx.records ORDER BY id;
-- slots enter the constraint as digests of their length-prefixed parts: parts
-- that concatenate alike are still other slots
SELECT pg_temp.rec(17, 'ab', '1', 'committed', '(,)', 'x');
SELECT pg_temp.rec(18, 'b', '2', 'committed', '(,)', 'xa');
SELECT memtx.slot_digest('x', 'ab', 'status') = memtx.slot_digest('xa', 'b', 'status') AS same_digest,
       memtx.slot_key('x', 'ab', 'status') = memtx.slot_key('xa', 'b', 'status') AS same_key;
-- the key is the digest's first eight bytes, and both are stable across platforms
SELECT memtx.slot_key('default', 'order:841', 'status') =
       ('x' || encode(substr(memtx.slot_digest('default', 'order:841', 'status'), 1, 8), 'hex'))::bit(64)::bigint AS key_is_prefix,
       encode(memtx.slot_digest('', '', ''), 'hex') = encode(sha256('\x000000000000000000000000'::bytea), 'hex') AS empty_parts;
SELECT memtx.slot_key(NULL, 'e', 'a') IS NULL AS strict;
