-- memtx demo: a memory write is not a belief commit.
--
-- The running example: an agent looks up order 841, comes to believe it is
-- refund-eligible, and wants to issue the refund.  memtx keeps the refund
-- blocked while the belief is only tentative, lets it run once the belief is
-- committed, and when the belief later proves wrong it repairs everything
-- derived from it and reports the refund that cannot be undone.
\pset null '∅'
\set VERBOSITY terse
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS memtx CASCADE;
DROP ROLE IF EXISTS refund_agent;
RESET client_min_messages;
CREATE EXTENSION memtx CASCADE;

\echo
\echo '== 1. The harness (this superuser session) configures the world'
\echo '   a trusted source, an irreversible tool, and an agent role'
SELECT memtx.register_source('order_lookup', 0.8);
SELECT memtx.register_tool('issue_refund', reversible => false);
CREATE ROLE refund_agent;
-- the harness opens the agent's turn; the tier is trusted configuration
SELECT memtx.begin('external_action', agent => 'refund_agent') AS tx \gset
SELECT id, agent, tier, isolation, status FROM memtx.transactions;

\echo
\echo '== 2. The agent stages what it learned: tentative, not yet a belief'
SET ROLE refund_agent;
SELECT memtx.stage(:tx, 'order:841', 'refund_eligible', 'true',
                   source => 'order_lookup', confidence => 0.9) AS belief \gset
SELECT memtx.stage(:tx, 'customer:7', 'profile', '{"refund_pending": "order:841"}',
                   kind => 'profile', derived_from => ARRAY[:belief]) AS profile \gset
RESET ROLE;
SELECT record_id, tx_id, entity, attribute FROM memtx.in_flight;

\echo
\echo '== 3. The refund is blocked while its support is in flight'
SET ROLE refund_agent;
SELECT * FROM memtx.gate(:tx, 'issue_refund');
SELECT * FROM memtx.act(:tx, 'issue_refund', '{"order": 841, "amount": 20}', ARRAY[:belief]);

\echo
\echo '== 4. The agent commits: the belief and the profile pass the pipeline'
\echo '   (external_action tier: committed records become action_safe)'
SELECT * FROM memtx.commit(:tx);

\echo
\echo '== 5. Now the refund executes, recorded as a tool action derived from the belief'
SELECT * FROM memtx.act(:tx, 'issue_refund', '{"order": 841, "amount": 20}', ARRAY[:belief]);
RESET ROLE;
SELECT r.id, r.entity, r.kind, r.state, r.value, e.parent AS derived_from
  FROM memtx.records r JOIN memtx.edges e ON e.child = r.id
 WHERE r.kind = 'tool_action';
SELECT id, tool, allowed, reason, blockers, action_id FROM memtx.action_log ORDER BY id;

\echo
\echo '== 6. Later the lookup proves wrong: the harness revokes the belief'
\echo '   the derived profile is quarantined; the refund cannot be undone and is logged as leaked'
SELECT record_id, kind, action, reason, note
  FROM memtx.revoke(:belief, 'order 841 had already been refunded');
SELECT id, kind, state, reason FROM memtx.records ORDER BY id;

\echo
\echo '== 7. What happened, as the store reports it'
SELECT root_id, record_id, kind, action, reason, note FROM memtx.rollback_log ORDER BY id;
\x on
SELECT commits, quarantines, gate_blocks, actions_allowed, cascades, leaks, compensations, in_flight
  FROM memtx.stats;
\x off
\echo 'the invariants hold (no rows):'
SELECT * FROM memtx.check_invariants();
\echo 'the lineage of the belief, as Graphviz DOT:'
\pset format unaligned
\pset tuples_only on
SELECT memtx.lineage_dot(:belief);
