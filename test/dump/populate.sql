-- A populated store for the dump/restore round trip: every table gets rows.
CREATE EXTENSION memtx CASCADE;
-- node 1 of a distributed store (§20): its number and id ranges survive the round trip
SELECT memtx.set_node(1);
SELECT memtx.register_source('crm', 0.7);
SELECT memtx.register_tool('send_email', false);
SELECT memtx.register_tool('issue_refund', true, 'reverse_refund');
-- a fenced and unfenced writer, whose open transaction the fence aborted
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memtx_dump_writer') THEN
        CREATE ROLE memtx_dump_writer;
    END IF;
    PERFORM memtx.stage(memtx.begin(agent => 'memtx_dump_writer'), 'order:9', 'eligible', 'true');
    PERFORM memtx.fence('memtx_dump_writer');
    PERFORM memtx.unfence('memtx_dump_writer');
END $$;
DO $$
DECLARE tx bigint; a bigint; b bigint; c bigint; tx2 bigint;
BEGIN
    tx := memtx.begin(tier => 'high');
    a := memtx.stage(tx, 'order:1', 'eligible', 'true', source => 'crm', confidence => 0.9);
    b := memtx.stage(tx, 'customer:1', 'profile', '{"tier": "gold"}', kind => 'profile', derived_from => ARRAY[a]);
    c := memtx.stage(tx, 'order:1', 'summary', '"eligible"', kind => 'summary', derived_from => ARRAY[b]);
    PERFORM memtx.commit(tx);
    PERFORM memtx.act(tx, 'send_email', '{"to": "c1"}', ARRAY[a], 'email-1');
    PERFORM memtx.act(tx, 'issue_refund', '{"order": 1}', ARRAY[a]);
    tx2 := memtx.begin();
    PERFORM memtx.read(tx2, 'order:1', 'eligible');
    PERFORM memtx.stage(tx2, 'order:1', 'eligible', 'false', confidence => 0.3);
    PERFORM memtx.commit(tx2);
    PERFORM memtx.revoke(a, 'lookup was wrong');
    -- an erased record: its erased_at and null value survive the round trip
    tx := memtx.begin();
    c := memtx.stage(tx, 'customer:1', 'card', '"4111"');
    PERFORM memtx.commit(tx);
    PERFORM memtx.erase(c, 'erasure request');
    tx := memtx.begin();
    PERFORM memtx.stage(tx, 'order:2', 'eligible', 'true');
END $$;
SELECT memtx.set_role_tier(current_user, 'medium');
SELECT memtx.grant_namespace('tenant-a', current_user);
-- the receipts so far are chained (receipt_heads has rows); the open
-- transaction's commit after each restore appends to the restored chain
SELECT memtx.chain_receipts();
-- the row an upgrade from 0.2.0 leaves for a namespace it found (a store created at 0.3.0 has none)
INSERT INTO memtx.receipt_anchoring (namespace, upgrade_pos) VALUES ('before-0.3.0', 0);
