-- memtx.stage_many: a JSON array of stage calls, ids in order, the same checks and errors, all or nothing.
\i test/sql/include/prelude.psql
CREATE ROLE regress_memtx_sm_a;
CREATE ROLE regress_memtx_sm_b;
SELECT memtx.register_source('crm', 0.8);
SELECT memtx.register_source('desk', 0.7, claimants => ARRAY['regress_memtx_sm_b']);
SET memtx.logical_now = '2030-12-31 00:00:00+00';
\i test/sql/include/fails.psql
-- pg_temp.batch(prefix, n, proposals): n records on slots prefix1..prefixn, value i, with proposal ids prefix-i when asked
CREATE FUNCTION pg_temp.batch(prefix text, n int, proposals bool DEFAULT false) RETURNS jsonb LANGUAGE sql AS $$
SELECT jsonb_agg(jsonb_build_object('entity', prefix || g, 'attribute', 'a', 'value', g)
                 || CASE WHEN proposals THEN jsonb_build_object('proposal', prefix || '-' || g) ELSE '{}' END ORDER BY g)
  FROM generate_series(1, n) g $$;
CREATE VIEW pg_temp.counts AS
    SELECT (SELECT count(*) FROM memtx.records) AS records, (SELECT count(*) FROM memtx.edges) AS edges;
-- every column a stage call decides, and the record's parents: what must match
CREATE FUNCTION pg_temp.content(tx bigint)
RETURNS TABLE (n bigint, content jsonb) LANGUAGE sql AS $$
SELECT row_number() OVER (ORDER BY r.staged_pos),
       to_jsonb(r) - '{id,tx_id,staged_xid,staged_pos,created_at,proposal}'::text[]
       || jsonb_build_object('parents', ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = r.id ORDER BY 1))
  FROM memtx.records r WHERE r.tx_id = $1 $$;

-- a committed parent with an observation time, for inheritance and edges
SELECT memtx.begin() AS tx0 \gset
SELECT memtx.stage(:tx0, 'p', 'x', '"parent"', observed_at => '2030-01-01 00:00+00') AS p \gset
SELECT count(*) AS committed FROM memtx.commit(:tx0) WHERE state = 'committed';

-- happy path: the same records by single stage calls and by one stage_many
SELECT memtx.begin() AS tx1 \gset
SELECT memtx.stage(:tx1, 'alice', 'email', '"a@example.com"') IS NOT NULL AS staged;
SELECT memtx.stage(:tx1, 'alice', 'plan', '{"tier": "gold"}', kind => 'summary', source => 'crm',
                   confidence => 0.75, derived_from => ARRAY[:p], scope => 'shared',
                   readers => ARRAY['regress_memtx_sm_a'], writers => ARRAY['regress_memtx_sm_b'],
                   valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)',
                   observed_at => '2030-02-01 10:00+00', expected_head => 0,
                   proposal => 'single-plan') IS NOT NULL AS staged;
SELECT memtx.stage(:tx1, 'bob', 'derived', '[1, 2]', derived_from => ARRAY[:p, :p], source => NULL)
       IS NOT NULL AS staged;
SELECT memtx.stage(:tx1, 'carol', 'note', 'null') IS NOT NULL AS staged;
SELECT memtx.begin() AS tx2 \gset
SELECT array_agg(id) AS ids FROM memtx.stage_many(:tx2, format($$[
    {"entity": "alice", "attribute": "email", "value": "a@example.com"},
    {"entity": "alice", "attribute": "plan", "value": {"tier": "gold"}, "kind": "summary",
     "source": "crm", "confidence": 0.75, "derived_from": [%1$s], "scope": "shared",
     "readers": ["regress_memtx_sm_a"], "writers": ["regress_memtx_sm_b"],
     "valid": "[2030-01-01 00:00+00, 2031-01-01 00:00+00)",
     "observed_at": "2030-02-01 10:00+00", "expected_head": 0, "proposal": "batch-plan"},
    {"entity": "bob", "attribute": "derived", "value": [1, 2], "derived_from": [%1$s, %1$s], "source": null},
    {"entity": "carol", "attribute": "note", "value": null}
  ]$$, :p)::jsonb) AS s(id) \gset
-- the ids come back in element order, one per element, and are the staged records
SELECT :'ids'::bigint[] = ARRAY(SELECT id FROM memtx.records WHERE tx_id = :tx2 ORDER BY staged_pos) AS ids_in_order,
       cardinality(:'ids'::bigint[]) AS n;
-- every row equals its single-stage twin (defaults, authority, inherited observed_at, edges)
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE a.content = b.content) AS equal
  FROM pg_temp.content(:tx1) a JOIN pg_temp.content(:tx2) b USING (n);
SELECT content->>'entity' AS entity, content->>'attribute' AS attribute, content->'value' AS value,
       content->>'kind' AS kind, content->>'authority' AS authority, content->>'observed_at' AS observed_at,
       content->'parents' AS parents
  FROM pg_temp.content(:tx2) ORDER BY n;
SELECT proposal FROM memtx.records WHERE tx_id = :tx2 AND proposal IS NOT NULL;
-- and the pipeline admits them like any staged record
SELECT state, reason FROM memtx.commit(:tx2) ORDER BY record_id;

-- an empty array stages nothing and returns no rows; the transaction is still checked
SELECT memtx.begin() AS tx \gset
SELECT count(*) AS rows FROM memtx.stage_many(:tx, '[]');
SELECT pg_temp.fails('SELECT memtx.stage_many(999999, ''[]'')');

-- refusals: each writes nothing, even when earlier elements were fine
SELECT * FROM pg_temp.counts;
-- NULL arguments
SELECT pg_temp.fails('SELECT memtx.stage_many(NULL, ''[]'')');
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, NULL)', :tx));
-- records must be an array of objects
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '{"entity": "e", "attribute": "a", "value": 1}'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '5'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, 7]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, [{"entity": "f"}]]'));
-- unknown keys, tx included, are named
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "colour": "red"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, {"tx": 1, "entity": "f", "attribute": "a", "value": 1}]'));
-- values of the wrong type
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "confidence": "high"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "kind": "opinion"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": {"name": "e"}, "attribute": "a", "value": 1}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "derived_from": [[1]]}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "derived_from": ["one"]}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "valid": "soon"}]'));
-- stage's own argument checks, in the element that fails
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "f", "attribute": "a"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "kind": null}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "e", "attribute": "b", "value": 1}, {"entity": "f", "attribute": "a", "value": 1, "confidence": 1.5}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "tool:deploy", "attribute": "a", "value": 1}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "kind": "tool_action"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "readers": ["regress_memtx_no_such_role"]}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "valid": "empty"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "observed_at": "2031-06-01 00:00+00"}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1, "proposal": ""}]'));
-- checks that read the store, after earlier elements were staged
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "f", "attribute": "a", "value": 1, "derived_from": [999999]}]'));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, format('[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "f", "attribute": "a", "value": 1, "expected_head": %s}]', :p)));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "alice", "attribute": "plan", "value": 2, "proposal": "single-plan"}]'));
SELECT * FROM pg_temp.counts;
SELECT count(*) AS staged_in_tx FROM memtx.records WHERE tx_id = :tx;

-- only the transaction's agent stages into it, as for stage
SET ROLE regress_memtx_sm_a;
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx, '[{"entity": "e", "attribute": "a", "value": 1}]'));
-- a source registered with claimants is for its claimants (and a harness)
SELECT memtx.begin() AS txa \gset
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :txa, '[{"entity": "e", "attribute": "a", "value": 1}, {"entity": "f", "attribute": "a", "value": 1, "source": "desk"}]'));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :txa;
RESET ROLE;
-- a claimed source for its claimant, in the claimant's own transaction
SET ROLE regress_memtx_sm_b;
SELECT memtx.begin() AS txb \gset
SELECT count(*) AS staged FROM memtx.stage_many(:txb, '[{"entity": "e", "attribute": "a", "value": 1, "source": "desk"}]');
SELECT count(*) FROM memtx.abort(:txb);
RESET ROLE;

-- proposals: a repeat in the batch, or of an earlier stage, with the same
-- content and agent is a retry (the original id, nothing staged)
SELECT memtx.begin() AS tx3 \gset
SELECT array_agg(id) AS ids FROM memtx.stage_many(:tx3, '[
    {"entity": "r", "attribute": "a", "value": 1, "proposal": "rp-1"},
    {"entity": "r", "attribute": "b", "value": 2},
    {"entity": "r", "attribute": "a", "value": 1, "proposal": "rp-1"}]') AS s(id) \gset
SELECT (:'ids'::bigint[])[1] = (:'ids'::bigint[])[3] AS repeat_returns_first,
       (SELECT count(*) FROM memtx.records WHERE tx_id = :tx3) AS staged;
SELECT count(*) FILTER (WHERE id = (SELECT id FROM memtx.records WHERE proposal = 'single-plan')) AS original,
       count(*) AS rows
  FROM memtx.stage_many(:tx3, format($$[{"entity": "alice", "attribute": "plan", "value": {"tier": "gold"},
       "kind": "summary", "source": "crm", "confidence": 0.75, "derived_from": [%1$s], "scope": "shared",
       "readers": ["regress_memtx_sm_a"], "writers": ["regress_memtx_sm_b"],
       "valid": "[2030-01-01 00:00+00, 2031-01-01 00:00+00)", "observed_at": "2030-02-01 10:00+00",
       "expected_head": 0, "proposal": "single-plan"}]$$, :p)::jsonb) AS s(id);
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx3;
-- the same id twice with different content in one batch: 23505, nothing staged
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx3, '[{"entity": "r", "attribute": "c", "value": 1, "proposal": "rp-2"}, {"entity": "r", "attribute": "c", "value": 2, "proposal": "rp-2"}]'));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx3;
SELECT count(*) FROM memtx.abort(:tx3);

-- proposal locks: a batch holds a bounded number of locks however many ids it binds
CREATE VIEW pg_temp.advisory AS
    SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
BEGIN;
SELECT memtx.begin() AS tx4 \gset
SELECT count(*) AS staged FROM memtx.stage_many(:tx4, pg_temp.batch('l', 3, true));
SELECT * FROM pg_temp.advisory;
COMMIT;
BEGIN;
SELECT memtx.begin() AS tx5 \gset
SELECT count(*) AS staged FROM memtx.stage_many(:tx5, pg_temp.batch('m', 200, true));
SELECT * FROM pg_temp.advisory;
-- a single stage with a proposal in the same SQL transaction is covered by the batch's lock
SELECT memtx.stage(:tx5, 'm0', 'a', '0', proposal => 'm-0') IS NOT NULL AS staged;
SELECT * FROM pg_temp.advisory;
COMMIT;

-- memtx.max_staged: a longer array is refused before anything is read; a
-- batch that would pass the limit fails at the element that passes it
SET memtx.max_staged = 5;
SELECT memtx.begin() AS tx6 \gset
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx6,
    pg_temp.batch('q', 6)));
SELECT count(*) AS staged FROM memtx.stage_many(:tx6,
    pg_temp.batch('q', 3));
SELECT pg_temp.fails(format('SELECT memtx.stage_many(%s, %L)', :tx6,
    pg_temp.batch('r2', 3)));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx6;
SELECT count(*) AS staged FROM memtx.stage_many(:tx6,
    pg_temp.batch('r2', 2));
SELECT count(*) AS staged FROM memtx.records WHERE tx_id = :tx6;
RESET memtx.max_staged;
SELECT count(*) FILTER (WHERE state = 'committed') AS committed FROM memtx.commit(:tx6);
-- a batch of plain elements (no parents, expected head or proposal id) is
-- written in one statement: the same rows as single stage calls, the ids in
-- element order, one tentative history row each at its staging position
SELECT memtx.begin() AS txp1 \gset
SELECT memtx.stage(:txp1, 'dave', 'email', '"d@example.com"') IS NOT NULL AS staged;
SELECT memtx.stage(:txp1, 'dave', 'plan', '{"tier": "gold"}', kind => 'summary', source => 'crm',
                   confidence => 0.75, scope => 'shared',
                   readers => ARRAY['regress_memtx_sm_a', 'regress_memtx_sm_a'], writers => ARRAY['regress_memtx_sm_b'],
                   valid => '[2030-01-01 00:00+00, 2031-01-01 00:00+00)',
                   observed_at => '2030-02-01 10:00+00') IS NOT NULL AS staged;
SELECT memtx.stage(:txp1, 'erin', 'note', 'null', source => 'nowhere') IS NOT NULL AS staged;
SELECT memtx.begin() AS txp2 \gset
SELECT array_agg(id) AS idsp FROM memtx.stage_many(:txp2, $$[
    {"entity": "dave", "attribute": "email", "value": "d@example.com"},
    {"entity": "dave", "attribute": "plan", "value": {"tier": "gold"}, "kind": "summary",
     "source": "crm", "confidence": 0.75, "scope": "shared",
     "readers": ["regress_memtx_sm_a", "regress_memtx_sm_a"], "writers": ["regress_memtx_sm_b"],
     "valid": "[2030-01-01 00:00+00, 2031-01-01 00:00+00)", "observed_at": "2030-02-01 10:00+00"},
    {"entity": "erin", "attribute": "note", "value": null, "source": "nowhere"}
  ]$$::jsonb) AS s(id) \gset
SELECT :'idsp'::bigint[] = ARRAY(SELECT id FROM memtx.records WHERE tx_id = :txp2 ORDER BY staged_pos) AS ids_in_order,
       :'idsp'::bigint[] = ARRAY(SELECT id FROM memtx.records WHERE tx_id = :txp2 ORDER BY id) AS ids_ascending,
       cardinality(:'idsp'::bigint[]) AS n;
SELECT count(*) AS rows_compared,
       count(*) FILTER (WHERE a.content = b.content) AS equal
  FROM pg_temp.content(:txp1) a JOIN pg_temp.content(:txp2) b USING (n);
SELECT count(*) AS history_rows,
       count(*) FILTER (WHERE h.state = 'tentative' AND h.pos = r.staged_pos) AS at_staging
  FROM memtx.history h JOIN memtx.records r ON r.id = h.record_id WHERE r.tx_id = :txp2;
-- a plain element's error names it and writes nothing of the batch
SET ROLE regress_memtx_sm_a;
SELECT memtx.begin() AS txp3 \gset
SELECT pg_temp.fails(format($$SELECT memtx.stage_many(%s, '[{"entity": "f", "attribute": "a", "value": 1},
    {"entity": "f", "attribute": "b", "value": 2, "source": "desk"}]')$$, :txp3));
RESET ROLE;
SELECT count(*) AS written FROM memtx.records WHERE tx_id = :txp3;

SELECT * FROM memtx.check_invariants();
DROP ROLE regress_memtx_sm_a;
DROP ROLE regress_memtx_sm_b;
