-- The action gate (SPEC §5): memtx.gate(tx, tool), every reason, both tiers.
\i test/sql/include/prelude.psql

SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_tool('lookup', true, 'noop');
SELECT memtx.register_source('crm', 0.8);

-- an empty store: nothing in flight, so a medium-tier irreversible call passes
SELECT memtx.begin('medium') AS tx1 \gset
SELECT * FROM memtx.gate(:tx1, 'issue_refund');

-- in_flight_tentative: the caller's own uncommitted staging blocks it
SELECT memtx.stage(:tx1, 'order:841', 'refund_eligible', 'true', source => 'crm') AS r1 \gset
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
-- an unregistered tool is irreversible: blocked the same way
SELECT * FROM memtx.gate(:tx1, 'wire_money');
-- a reversible tool passes whatever is in flight
SELECT * FROM memtx.gate(:tx1, 'lookup');

-- another transaction's staging blocks too; blockers lists every tentative id
SELECT memtx.begin('low') AS tx2 \gset
SELECT memtx.stage(:tx2, 'order:842', 'refund_eligible', 'false', source => 'crm') AS r2 \gset
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
SELECT * FROM memtx.gate(:tx2, 'issue_refund');

-- staging in another namespace does not block this one
SELECT memtx.begin('low', namespace => 'elsewhere') AS tx3 \gset
SELECT memtx.stage(:tx3, 'order:1', 'x', '1') AS r3 \gset
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
SELECT * FROM memtx.gate(:tx3, 'issue_refund');

-- commit tx1: its own record settles, tx2's still blocks
SELECT * FROM memtx.commit(:tx1);
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
-- a quarantined staging is settled and no longer in flight
SELECT memtx.stage(:tx2, 'order:843', 'refund_eligible', 'true', confidence => 0.1) AS r4 \gset
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
SELECT * FROM memtx.commit(:tx2);
-- nothing tentative left in 'default': the committed tx1 may act (gate works after commit)
SELECT * FROM memtx.gate(:tx1, 'issue_refund');
-- tx2 ended partially_committed: it may act too
SELECT * FROM memtx.gate(:tx2, 'issue_refund');

-- an aborted transaction cannot use the gate
SELECT count(*) AS rows_logged FROM memtx.abort(:tx3);
SELECT pg_temp.try(format('SELECT memtx.gate(%s, %L)', :tx3, 'issue_refund'));
SELECT pg_temp.try(format('SELECT memtx.gate(%s, %L)', :tx3, 'lookup'));

-- external_action tier --------------------------------------------------------
-- r1 is committed, not action_safe: no action_safe support
SELECT memtx.begin('external_action') AS tx4 \gset
SELECT * FROM memtx.gate(:tx4, 'issue_refund');
SELECT * FROM memtx.gate(:tx4, 'lookup');
-- while its own staging is in flight, in_flight_tentative is reported first
SELECT memtx.stage(:tx4, 'order:844', 'refund_eligible', 'true', source => 'crm') AS r5 \gset
SELECT * FROM memtx.gate(:tx4, 'issue_refund');
SELECT * FROM memtx.commit(:tx4);
-- its own action_safe record supports it
SELECT * FROM memtx.gate(:tx4, 'issue_refund');

-- an action_safe record committed after the snapshot is not visible, so it does not support
SELECT memtx.begin('external_action', namespace => 'snap') AS tx5 \gset
SELECT memtx.begin('external_action', namespace => 'snap') AS tx6 \gset
SELECT memtx.stage(:tx6, 'order:845', 'refund_eligible', 'true') AS r6 \gset
SELECT * FROM memtx.commit(:tx6);
SELECT * FROM memtx.gate(:tx6, 'issue_refund');
SELECT * FROM memtx.gate(:tx5, 'issue_refund');
-- a transaction begun after the commit sees it; one in another namespace does not
SELECT memtx.begin('external_action', namespace => 'snap') AS tx7 \gset
SELECT * FROM memtx.gate(:tx7, 'issue_refund');
SELECT memtx.begin('external_action', namespace => 'fresh') AS tx8 \gset
SELECT * FROM memtx.gate(:tx8, 'issue_refund');

-- an action_safe record the agent may not read does not support it.
-- A harness begins on behalf of each agent; the agent makes its calls itself.
CREATE ROLE regress_memtx_alice;
CREATE ROLE regress_memtx_bob;
SELECT memtx.begin('external_action', agent => 'regress_memtx_alice', namespace => 'private') AS tx9 \gset
SELECT memtx.begin('external_action', agent => 'regress_memtx_bob', namespace => 'private') AS tx10 \gset
SET ROLE regress_memtx_alice;
SELECT memtx.stage(:tx9, 'order:900', 'refund_eligible', 'true') AS r9 \gset
SELECT * FROM memtx.commit(:tx9);
SELECT * FROM memtx.gate(:tx9, 'issue_refund');
SET ROLE regress_memtx_bob;
SELECT memtx.begin() AS tx11 \gset
RESET ROLE;
SELECT tier, isolation, agent FROM memtx.transactions WHERE id = :tx11;
SET ROLE regress_memtx_bob;
SELECT * FROM memtx.gate(:tx10, 'issue_refund');
-- bob may not use alice's transaction
SELECT pg_temp.try(format('SELECT memtx.gate(%s, %L)', :tx9, 'issue_refund'));
RESET ROLE;
-- alice's record shared with bob supports him in a later transaction
SELECT memtx.begin('external_action', agent => 'regress_memtx_alice', namespace => 'private') AS tx12 \gset
SET ROLE regress_memtx_alice;
SELECT memtx.stage(:tx12, 'order:901', 'refund_eligible', 'true', readers => '{regress_memtx_bob}') AS r12 \gset
SELECT * FROM memtx.commit(:tx12);
RESET ROLE;
SELECT memtx.begin('external_action', agent => 'regress_memtx_bob', namespace => 'private') AS tx13 \gset
SET ROLE regress_memtx_bob;
SELECT * FROM memtx.gate(:tx13, 'issue_refund');
RESET ROLE;

-- the newest action_safe records are judged first, in batches that double from one: 100
-- newer ones bob may not read do not hide the older one he may (the seventh batch finds it)
SELECT memtx.begin('external_action', agent => 'regress_memtx_alice', namespace => 'private') AS tx14 \gset
SET ROLE regress_memtx_alice;
SELECT count(*) AS staged FROM memtx.stage_many(:tx14,
    (SELECT jsonb_agg(jsonb_build_object('entity', 'order:' || (1000 + i), 'attribute', 'refund_eligible',
                                         'value', true))
       FROM generate_series(1, 100) i));
SELECT state, count(*) FROM memtx.commit(:tx14) GROUP BY state;
RESET ROLE;
SELECT count(*) AS newer_action_safe FROM memtx.records
 WHERE namespace = 'private' AND state = 'action_safe' AND id > :r12;
SELECT memtx.begin('external_action', agent => 'regress_memtx_bob', namespace => 'private') AS tx15 \gset
SET ROLE regress_memtx_bob;
SELECT * FROM memtx.gate(:tx15, 'issue_refund');
RESET ROLE;
-- with that one gone, every batch is read and none supports him
BEGIN;
UPDATE memtx.records SET state = 'superseded' WHERE id = :r12;
SET ROLE regress_memtx_bob;
SELECT * FROM memtx.gate(:tx15, 'issue_refund');
RESET ROLE;
ROLLBACK;

-- the gate is a probe: it records nothing
SELECT count(*) AS action_log_rows FROM memtx.action_log;
SELECT count(*) AS tool_action_records FROM memtx.records WHERE kind = 'tool_action';

-- bad input
SELECT pg_temp.try('SELECT memtx.gate(NULL, ''issue_refund'')');
SELECT pg_temp.try('SELECT memtx.gate(999999, ''issue_refund'')');
SELECT pg_temp.try(format('SELECT memtx.gate(%s, NULL)', :tx1));
SELECT pg_temp.try(format('SELECT memtx.gate(%s, %L)', :tx1, ''));
SELECT pg_temp.try(format('SELECT memtx.gate(%s, %L)', :tx1, repeat('t', 300)));

DROP ROLE regress_memtx_alice;
DROP ROLE regress_memtx_bob;
