-- A store populated through the API at memtx 0.1.0, for 006_upgrade.pl:
-- every kind, every state at rest (raw and validated never are: raw is
-- not staged by the API, validated is a step inside commit), edges,
-- actions with and without effect keys, rollback log, compensations,
-- registry rows, sources, tools, role tiers, an aborted and an open
-- transaction with a read set.
CREATE ROLE regress_memtx_upgrade;
-- registries: sources, tools, role tiers
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('erp', 0.8);
SELECT memtx.register_source('ledger', 1.0);
SELECT memtx.register_tool('send_email', false);
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.set_role_tier('regress_memtx_upgrade', 'high');
DO $$
DECLARE
    t1 bigint; t2 bigint; t3 bigint; t4 bigint; t5 bigint; t6 bigint;
    b bigint; s bigint; p bigint; i bigint; c bigint; h bigint; act bigint;
BEGIN
    -- every kind, committed: belief -> summary -> profile -> index_entry, shared_copy
    t1 := memtx.begin('medium');
    b := memtx.stage(t1, 'order:1', 'eligible', 'true', source => 'crm', confidence => 0.9);
    s := memtx.stage(t1, 'order:1', 'summary', '"eligible"', kind => 'summary', derived_from => ARRAY[b]);
    p := memtx.stage(t1, 'customer:1', 'profile', '{"tier": "gold"}', kind => 'profile', derived_from => ARRAY[s]);
    i := memtx.stage(t1, 'index', 'order:1', '"eligible order"', kind => 'index_entry', derived_from => ARRAY[b]);
    c := memtx.stage(t1, 'team', 'order:1', '"eligible"', kind => 'shared_copy', derived_from => ARRAY[b],
                     scope => 'shared', readers => ARRAY['regress_memtx_upgrade']);
    h := memtx.stage(t1, 'order:1', 'held', 'false', source => 'crm',
                     valid => tstzrange('2026-01-01', '2027-01-01'));
    PERFORM memtx.commit(t1);
    -- tool actions (tool_action kind): reversible with an effect key, and irreversible
    PERFORM memtx.read(t1, 'order:1', 'eligible');
    act := (memtx.act(t1, 'hold_order', '{"order": 1}', ARRAY[p], 'hold-1')).action_id;
    PERFORM memtx.act(t1, 'send_email', '{"to": "c1"}', ARRAY[b], 'email-1');
    -- action_safe: committed at the external_action tier
    t2 := memtx.begin('external_action');
    PERFORM memtx.stage(t2, 'order:2', 'eligible', 'true', source => 'ledger');
    PERFORM memtx.commit(t2);
    -- needs_review (quarantined) and superseded: rivals of equal authority, then resolve
    t3 := memtx.begin();
    PERFORM memtx.stage(t3, 'order:1', 'held', 'true', source => 'erp');
    PERFORM memtx.stage(t3, 'order:3', 'eligible', 'true', source => 'erp');
    PERFORM memtx.commit(t3);
    PERFORM memtx.resolve((SELECT id FROM memtx.records WHERE entity = 'order:1' AND attribute = 'held'
                             AND value = 'true'), true);
    -- left awaiting review: a contender of equal authority
    t6 := memtx.begin();
    PERFORM memtx.stage(t6, 'order:3', 'eligible', 'false', source => 'crm');
    PERFORM memtx.commit(t6);
    -- revoked, with cascade repair: rollback log and a compensation obligation
    PERFORM memtx.revoke(b, 'lookup was wrong');
    -- an aborted transaction and an open one with tentative records and a read set
    t4 := memtx.begin();
    PERFORM memtx.stage(t4, 'order:4', 'eligible', 'true');
    PERFORM memtx.abort(t4);
    t5 := memtx.begin();
    PERFORM memtx.read(t5, 'order:2', 'eligible');
    PERFORM memtx.stage(t5, 'order:5', 'eligible', 'true');
END $$;
