-- memtx.read_as_of (SPEC §13): the records active at a past instant, readable by the caller,
-- valid at valid_at when given; state and reason as at that instant; writes nothing.
\i test/sql/include/prelude.psql
CREATE ROLE regress_asof_a;
CREATE ROLE regress_asof_b;
SELECT memtx.register_source('ledger', 1.0);

-- day 1: status open (public), a private pin, a limit of 100 valid until noon of day 2
SET memtx.logical_now = '2030-01-01 00:00+00';
SET ROLE regress_asof_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"open"', scope => 'public') AS r1 \gset
SELECT memtx.stage(:tx, 'acct:1', 'pin', '"1234"') AS r2 \gset
SELECT memtx.stage(:tx, 'acct:1', 'limit', '100', scope => 'public',
                   valid => '[2029-01-01 00:00+00,2030-01-02 12:00+00)') AS r3 \gset
RESET ROLE; SET memtx.logical_now = '2030-01-02 00:00+00'; SET ROLE regress_asof_a;
SELECT record_id, state FROM memtx.commit(:tx);
-- day 3: the ledger closes the account (status open is superseded); a limit of 200 from noon of day 2
RESET ROLE; SET memtx.logical_now = '2030-01-03 00:00+00'; SET ROLE regress_asof_a;
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:1', 'limit', '200', scope => 'public',
                   valid => '[2030-01-02 12:00+00,2031-01-01 00:00+00)') AS r4 \gset
SELECT memtx.stage(:tx, 'acct:1', 'status', '"closed"', scope => 'public', source => 'ledger') AS r5 \gset
SELECT record_id, state FROM memtx.commit(:tx);
-- day 4: the closing is revoked; another account in another namespace is left tentative
RESET ROLE; SET memtx.logical_now = '2030-01-04 00:00+00'; SET ROLE regress_asof_a;
SELECT count(*) AS repaired FROM memtx.revoke(:r5);
SELECT memtx.begin() AS tx \gset
SELECT memtx.stage(:tx, 'acct:2', 'status', '"open"', scope => 'public') AS r6 \gset
RESET ROLE;
SELECT memtx.begin(agent => 'regress_asof_a', namespace => 'bank') AS tx \gset
SET ROLE regress_asof_a;
SELECT memtx.stage(:tx, 'acct:1', 'status', '"frozen"', scope => 'public') AS r7 \gset
SELECT record_id, state FROM memtx.commit(:tx);
RESET ROLE;
RESET memtx.logical_now;
SELECT id, namespace, state, reason FROM memtx.records ORDER BY id;

SET ROLE regress_asof_a;
-- before day 2 nothing was active; then the three; day 3 the closing; day 4 nothing on status
SELECT id, entity, attribute, value, state, reason FROM memtx.read_as_of('2030-01-01 12:00+00', 'acct:1');
SELECT id, attribute, value, state, reason FROM memtx.read_as_of('2030-01-02 00:00+00', 'acct:1');
SELECT id, attribute, value, state, reason FROM memtx.read_as_of('2030-01-03 12:00+00', 'acct:1', 'status');
SELECT id, attribute, value, state, reason FROM memtx.read_as_of('2030-01-05 00:00+00', 'acct:1', 'status');
-- the state and reason are those at the instant; the other columns are current
SELECT r.id, r.state AS as_of_state, c.state AS current_state, r.valid = c.valid AND r.value = c.value AS rest_current
  FROM memtx.read_as_of('2030-01-03 12:00+00') r JOIN memtx.records c USING (id) ORDER BY r.id;
-- bi-temporal: the limit that held in June 2030, as memory stood on day 2 (none known) and on
-- day 3 (200); the limit that held on day 1, as memory stood on day 3 (100)
SELECT id, value FROM memtx.read_as_of('2030-01-02 00:00+00', 'acct:1', 'limit', valid_at => '2030-06-01 00:00+00');
SELECT id, value FROM memtx.read_as_of('2030-01-03 00:00+00', 'acct:1', 'limit', valid_at => '2030-06-01 00:00+00');
SELECT id, value FROM memtx.read_as_of('2030-01-03 00:00+00', 'acct:1', 'limit', valid_at => '2030-01-01 00:00+00');
SELECT id, value FROM memtx.read_as_of('2030-01-03 00:00+00', 'acct:1', 'limit');
-- a namespace of its own, read by its members only (SPEC §17: the same
-- error whether it exists or not); a tentative record is never returned
SELECT pg_temp.try($$SELECT memtx.read_as_of('2030-01-05 00:00+00', namespace => 'bank')$$);
SELECT pg_temp.try($$SELECT memtx.read_as_of('2030-01-05 00:00+00', namespace => 'other')$$);
RESET ROLE;
SELECT memtx.grant_namespace('bank', 'regress_asof_a');
SET ROLE regress_asof_a;
SELECT id, value FROM memtx.read_as_of('2030-01-05 00:00+00', namespace => 'bank');
SELECT count(*) FROM memtx.read_as_of('2030-01-05 00:00+00', 'acct:2');
RESET ROLE;

-- readable by the caller: b sees the public records, not a's pin
SET ROLE regress_asof_b;
SELECT id, attribute FROM memtx.read_as_of('2030-01-02 00:00+00');
RESET ROLE;

-- it writes nothing: it runs in a READ ONLY transaction, takes no xid and no clock position
SELECT last_value AS clock FROM memtx.clock \gset
BEGIN TRANSACTION READ ONLY;
SET LOCAL ROLE regress_asof_a;
SELECT count(*) FROM memtx.read_as_of('2030-01-02 00:00+00');
SELECT pg_current_xact_id_if_assigned() IS NULL AS no_xid;
COMMIT;
SELECT last_value = :clock AS clock_unchanged FROM memtx.clock;
SELECT count(*) AS read_set_rows FROM memtx.read_set;

-- bad input
SELECT pg_temp.try($$SELECT * FROM memtx.read_as_of(NULL)$$);
SELECT pg_temp.try($$SELECT * FROM memtx.read_as_of(now(), namespace => NULL)$$);

DROP ROLE regress_asof_a;
DROP ROLE regress_asof_b;
