-- Writer fencing (SPEC §12): fence advances a role's writer epoch and aborts its open
-- transactions (reason fenced, cascade as for any abort) in every namespace; until unfence
-- every write by the role fails with 42501; a call on a transaction opened under an older
-- epoch fails forever, even after unfence and even for a harness; reads without a
-- transaction still answer.
\i test/sql/include/prelude.psql
\i test/sql/include/show_records.psql
CREATE ROLE regress_memtx_fc_agent;
CREATE ROLE regress_memtx_fc_member IN ROLE regress_memtx_fc_agent;
CREATE ROLE regress_memtx_fc_next;
CREATE ROLE regress_memtx_fc_group;
GRANT regress_memtx_fc_group TO regress_memtx_fc_agent;
SELECT memtx.register_tool('hold_order', true, 'release_order');
SELECT memtx.register_tool('issue_refund', false);
SELECT memtx.register_source('crm', 0.7);
SELECT memtx.register_source('erp', 0.7);
SELECT memtx.grant_namespace('acme', 'regress_memtx_fc_agent');

-- the agent's history before the fence: a committed transaction that acted, a committed
-- record awaiting review, an open transaction with a derived record and an action on its
-- own staging, and an open transaction in another namespace that a harness opened for it
SET ROLE regress_memtx_fc_next;
SELECT memtx.begin() AS rival_tx \gset
SELECT memtx.stage(:rival_tx, 'order:7', 'carrier', '"dhl"', source => 'crm', scope => 'public') AS rival \gset
SELECT state FROM memtx.commit(:rival_tx);
RESET ROLE;
SET ROLE regress_memtx_fc_agent;
SELECT memtx.begin() AS done_tx \gset
SELECT memtx.stage(:done_tx, 'order:1', 'status', '"paid"', scope => 'public') AS paid \gset
SELECT memtx.stage(:done_tx, 'order:7', 'carrier', '"ups"', source => 'erp', scope => 'public') AS review \gset
SELECT record_id = :review AS is_review, state, reason FROM memtx.commit(:done_tx) ORDER BY record_id;
SELECT allowed FROM memtx.act(:done_tx, 'hold_order', '{"order": 1}', ARRAY[:paid]);
SELECT memtx.begin() AS open_tx \gset
SELECT memtx.stage(:open_tx, 'order:2', 'status', '"new"') AS draft \gset
SELECT memtx.stage(:open_tx, 'order:2', 'summary', '"new order"', kind => 'summary', derived_from => ARRAY[:draft]) AS derived \gset
SELECT (memtx.act(:open_tx, 'hold_order', '{"order": 2}', ARRAY[:draft])).action_id AS held \gset
RESET ROLE;
SELECT memtx.begin(agent => 'regress_memtx_fc_agent', namespace => 'acme') AS acme_tx \gset
SET ROLE regress_memtx_fc_agent;
SELECT memtx.stage(:acme_tx, 'order:3', 'status', '"new"') AS acme_draft \gset
RESET ROLE;
-- a member of the agent role has a transaction of its own: the fence does not touch it
SET ROLE regress_memtx_fc_member;
SELECT memtx.begin() AS member_tx \gset
SELECT memtx.stage(:member_tx, 'order:4', 'status', '"new"') AS member_draft \gset
RESET ROLE;
SELECT agent, epoch, count(*) FROM memtx.transactions GROUP BY 1, 2 ORDER BY 1, 2;

-- fence and unfence are harness operations: 42501 for anyone else, before anything about
-- the role is looked at
SET ROLE regress_memtx_fc_next;
SELECT pg_temp.try('SELECT memtx.fence(''regress_memtx_fc_agent'')');
SELECT pg_temp.try('SELECT memtx.fence(''regress_memtx_fc_nobody'')');
SELECT pg_temp.try('SELECT memtx.unfence(''regress_memtx_fc_agent'')');
RESET ROLE;
-- bad arguments: unknown role 42704, NULL 22004, empty 22023, too long 54000; nothing written
SELECT pg_temp.try('SELECT memtx.fence(''regress_memtx_fc_nobody'')');
SELECT pg_temp.try('SELECT memtx.unfence(''regress_memtx_fc_nobody'')');
SELECT pg_temp.try('SELECT memtx.fence(NULL)');
SELECT pg_temp.try('SELECT memtx.fence('''')');
SELECT pg_temp.try(format('SELECT memtx.fence(%L)', repeat('r', 64)));
SELECT count(*) AS epochs FROM memtx.writer_epochs;
SELECT count(*) AS still_open FROM memtx.transactions WHERE status = 'open';

-- the fence: epoch 1, every open transaction of the role aborted with reason fenced in
-- every namespace, its staging revoked and repaired as by abort; the member's runs on
SELECT memtx.fence('regress_memtx_fc_agent') AS epoch;
SELECT role_name, epoch, pos > 0 AS positioned, unfenced_at IS NULL AS fenced FROM memtx.writer_epochs;
SELECT id = :open_tx AS open_tx, id = :acme_tx AS acme_tx, id = :member_tx AS member_tx,
       namespace, status, end_reason
  FROM memtx.transactions WHERE id IN (:open_tx, :acme_tx, :member_tx, :done_tx) ORDER BY id;
SELECT * FROM pg_temp.show(ARRAY[:draft, :derived, :held, :acme_draft, :member_draft, :paid]);
SELECT root_id, record_id, kind, action, reason FROM memtx.rollback_log ORDER BY id;
SELECT count(*) AS obligations FROM memtx.compensations WHERE action_id = :held;

-- while fenced, every write by the role fails with 42501: its own begin (in any
-- namespace), a harness's begin on its behalf, revoke of its own record
SET ROLE regress_memtx_fc_agent;
SELECT pg_temp.try('SELECT memtx.begin()');
SELECT pg_temp.try('SELECT memtx.begin(namespace => ''acme'')');
SELECT pg_temp.try(format('SELECT memtx.revoke(%s)', :paid));
RESET ROLE;
SELECT pg_temp.try('SELECT memtx.begin(agent => ''regress_memtx_fc_agent'')');
-- a member of the role and other roles write as before
SET ROLE regress_memtx_fc_member;
SELECT state FROM memtx.commit(:member_tx);
RESET ROLE;
SET ROLE regress_memtx_fc_next;
SELECT memtx.begin() > 0 AS successor_began;
RESET ROLE;
-- a session whose session user is the fenced role cannot escape by SET ROLE (SPEC §17):
-- a group role it belongs to can neither begin nor write into a transaction of its own
SELECT memtx.begin(agent => 'regress_memtx_fc_group') AS group_tx \gset
SET SESSION AUTHORIZATION regress_memtx_fc_agent;
SET ROLE regress_memtx_fc_group;
SELECT pg_temp.try('SELECT memtx.begin()');
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''order:9'', ''status'', ''1'')', :group_tx));
SELECT pg_temp.try('SELECT memtx.propose(''order:9'', ''status'', ''1'')');
-- reads and probes still answer
SELECT count(*) >= 0 AS reads FROM memtx.read(:group_tx);
RESET SESSION AUTHORIZATION;
-- the group itself is not fenced: its own session writes
SET ROLE regress_memtx_fc_group;
SELECT memtx.stage(:group_tx, 'order:9', 'status', '1') > 0 AS group_writes;
RESET ROLE;

-- every call on a transaction of the old epoch fails with 42501: the committed one's stored
-- outcome and an act in it, reads and gates, the aborted one's outcome and abort, a stage
SET ROLE regress_memtx_fc_agent;
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.act(%s, ''hold_order'', ''{}'', ARRAY[%s])', :done_tx, :paid));
SELECT pg_temp.try(format('SELECT memtx.read(%s)', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.recall(%s, ''paid'')', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.gate(%s, ''issue_refund'')', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :open_tx));
SELECT pg_temp.try(format('SELECT memtx.abort(%s)', :open_tx));
SELECT pg_temp.try(format('SELECT memtx.stage(%s, ''order:5'', ''status'', ''1'')', :open_tx));
-- reads without a transaction still answer: the committed record stays active
SELECT id = :paid AS is_paid, state FROM memtx.lookup('order:1', 'status');
-- the role sees its own epochs, nobody else's
SELECT role_name, epoch FROM memtx.writer_epochs;
RESET ROLE;
SET ROLE regress_memtx_fc_next;
SELECT count(*) AS epochs_seen_by_others FROM memtx.writer_epochs;
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :done_tx));
RESET ROLE;
-- a harness is refused too, and cannot accept a review of the old epoch (a commit in it);
-- rejecting retracts, which a fence never forbids
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.act(%s, ''hold_order'', ''{}'', ARRAY[%s])', :done_tx, :paid));
SELECT pg_temp.try(format('SELECT memtx.resolve(%s, true)', :review));
SELECT * FROM pg_temp.show(ARRAY[:review]);
SELECT memtx.resolve(:review, false);
SELECT * FROM memtx.check_invariants();

-- unfence: the role writes again in a new transaction of epoch 1; the epoch stays, and the
-- old transactions stay refused, also for a harness
SELECT memtx.unfence('regress_memtx_fc_agent');
SELECT memtx.unfence('regress_memtx_fc_agent');   -- not fenced: nothing changes
SELECT memtx.unfence('regress_memtx_fc_next');    -- never fenced: nothing changes
SELECT role_name, epoch, unfenced_at IS NULL AS fenced FROM memtx.writer_epochs;
SET ROLE regress_memtx_fc_agent;
SELECT memtx.begin() AS new_tx \gset
SELECT epoch FROM memtx.transactions WHERE id = :new_tx;
SELECT memtx.stage(:new_tx, 'order:2', 'status', '"new"') AS redo \gset
SELECT state FROM memtx.commit(:new_tx);
SELECT allowed FROM memtx.act(:new_tx, 'hold_order', '{"order": 2}', ARRAY[:redo]);
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :done_tx));
SELECT pg_temp.try(format('SELECT memtx.act(%s, ''hold_order'', ''{}'', ARRAY[%s])', :done_tx, :paid));
SELECT count(*) AS revoked FROM memtx.revoke(:paid, 'the role may retract again');
RESET ROLE;
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :done_tx));
SELECT memtx.begin(agent => 'regress_memtx_fc_agent') > 0 AS harness_began_for_it;

-- each fence opens a new epoch, also of a role already fenced; one unfence ends the fence
SELECT memtx.fence('regress_memtx_fc_agent') AS epoch;
SELECT memtx.fence('regress_memtx_fc_agent') AS epoch;
SELECT status, end_reason, count(*) FROM memtx.transactions
 WHERE agent = 'regress_memtx_fc_agent' GROUP BY 1, 2 ORDER BY 1, 2;
SELECT pg_temp.try(format('SELECT memtx.commit(%s)', :new_tx));
SELECT memtx.unfence('regress_memtx_fc_agent');
SELECT role_name, epoch, unfenced_at IS NULL AS fenced FROM memtx.writer_epochs ORDER BY epoch;
SELECT memtx.begin(agent => 'regress_memtx_fc_agent') AS last_tx \gset
SELECT epoch FROM memtx.transactions WHERE id = :last_tx;
SELECT * FROM memtx.check_invariants();

-- the checker finds a commit in a transaction of a fenced epoch after its fence, planted
-- behind the API: a record of the epoch-0 transaction, or of the epoch-1 one, committed at a
-- position after the fence that ended its epoch.  The same plant on a record of a role never
-- fenced is no violation.
BEGIN;
UPDATE memtx.records SET committed_seq = nextval('memtx.clock') WHERE id = :rival;
SELECT invariant, record_id FROM memtx.check_invariants();
ROLLBACK;
BEGIN;
UPDATE memtx.records SET committed_seq = nextval('memtx.clock') WHERE id = :paid;
SELECT c.invariant, i.name, c.record_id = :paid AS is_paid, c.detail ~ '\(role regress_memtx_fc_agent, epoch 0\)' AS names_epoch
  FROM memtx.check_invariants() c JOIN memtx.invariants i ON i.code = c.invariant;
ROLLBACK;
BEGIN;
UPDATE memtx.records SET committed_seq = nextval('memtx.clock') WHERE id = :redo;
SELECT c.invariant, i.name, c.record_id = :redo AS is_redo, c.detail ~ 'epoch 1\) .* fence to epoch 2 ' AS names_epoch
  FROM memtx.check_invariants() c JOIN memtx.invariants i ON i.code = c.invariant;
ROLLBACK;

DROP FUNCTION pg_temp.show(bigint[]);
DROP EXTENSION memtx CASCADE;
DROP ROLE regress_memtx_fc_member;
DROP ROLE regress_memtx_fc_agent;
DROP ROLE regress_memtx_fc_next;
DROP ROLE regress_memtx_fc_group;
