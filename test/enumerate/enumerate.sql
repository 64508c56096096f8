-- Exhaustive enumeration of memtx's protocol states: the alphabet and the
-- canonical state, shared by every driver that walks the state space.
--
-- Run by a superuser in the enumeration database after CREATE EXTENSION
-- memtx.  Makes schema memtx_enum with
--
--   memtx_enum.actions(max_records int, max_tx int, alphabet text DEFAULT 'papers')
--       RETURNS TABLE (caller text, call jsonb, stmt text, label text, probe text)
--     every call enabled in the current state, in a deterministic order.
--     caller: the role to SET ROLE to before the call (NULL: the harness,
--     i.e. the superuser itself); call: the call as the model of SPEC.md
--     (test/model/model.py) takes it, with the ids of the current state;
--     stmt: one SQL statement making the call with literal arguments, with
--     the result columns test/model/traces.py shapes; label: the call in
--     canonical form (transactions T1.. and records R1.. numbered by id,
--     as state() numbers them), unique among the calls of a state; probe:
--     the same call as one SQL statement returning its result in canonical
--     form, one text value (ids as labels, as the model renders its
--     prediction, test/enumerate/model_enum.py):
--       begin, stage       the new transaction or record: T3, R2
--       commit             "R1 committed -; R2 quarantined low_evidence"
--       abort, revoke, erase
--                          "R1 revoked aborted; R3 quarantined invalidated"
--                          (rows by record)
--       resolve            the state the record reached
--       read               "[R1,R2]"
--       gate               "false in_flight_tentative [R4]"
--       act                "true - R5 []" (allowed, reason, action, blockers)
--       fence              the new epoch; unfence: ""
--
--   memtx_enum.state() RETURNS text
--     the canonical state (one line): two states with the same text have
--     the same future up to renaming, so a driver explores one of them.
--
-- and the roles, sources, tools and settings below.  The background worker
-- must not serve this database (leave it out of memtx.databases), or it
-- would act on its own clock.
--
-- The alphabets (R = max_records, T = max_tx).  'papers', the alphabet of
-- the published models (read, stage, commit, abort, revoke, gate/act), kept
-- lean enough that their bound (4, 3, 10) is within reach:
--   begin    (harness, while fewer than T transactions exist) alternately
--            agent memtx_enum_a at tier low (committed_read) and agent
--            memtx_enum_b at tier external_action (action_safe_read)
--   read     each open or committed transaction, the whole namespace, by its
--            agent
--   stage    into each open transaction, by its agent (while fewer than R
--            records other than tool actions exist): entity e, attribute
--            s1, value 1 for agent a and 2 for agent b (an agent's records
--            corroborate each other, the two agents' are rivals), no parent
--            or one existing record other than a tool action, kind belief,
--            confidence 1.0; scope public, so that the agents derive from
--            each other's records; source crm for agent a, crm2 for agent
--            b: the same authority (0.7) from different sources, so that
--            rivals of the two agents need review
--   commit, abort   each open transaction, by its agent
--   revoke   each record not yet revoked (tool actions included), by its
--            owner
--   act      in each open or committed transaction that has no tool action
--            yet, by its agent: tool refund (irreversible), args {"n": 1},
--            inputs none | one existing record other than a tool action.
--            (Acts are not counted in R; one allowed act per transaction
--            keeps every repair path, the blocked calls stay enabled until
--            then.)
--   gate     each open or committed transaction, tool refund, by its agent
-- 'memtx', memtx's own alphabet, richer:
--   begin    any of: agent a at tier low; agent b at external_action; agent
--            b at low pinned to raw_read
--   stage    attribute s1 | s2, value 1 | 2 (for either agent), and either
--            no parent (kind belief, confidence 1.0 | 0.3: low_evidence) or
--            one existing record (kind belief | summary, confidence 1.0)
--   act      tool refund | note (reversible)
--   read, commit, abort, revoke as above, and
--   resolve  each record awaiting review (quarantined, needs_review),
--            accept | reject, by the harness
--   fence    agent memtx_enum_b, by the harness, while it is not fenced;
--            unfence it while it is
--   erase    each record not yet erased, by the harness
-- Errors are transitions too (resolve accepting below an inactive
-- ancestor, a call on a transaction of a fenced epoch).
--
-- Symmetry in the alphabet: stage offers the slots already used plus the
-- first unused one, and per slot the values already used there plus the
-- first unused one.  Sound: two unused slots (or two values unused on a
-- slot) are interchangeable in the current state, so the states a stage on
-- either reaches are renamings of each other (state() below maps them to
-- one text).
--
-- The logical clock is fixed (validity is unbounded in this alphabet, so it
-- would not matter) and the lease is a day: nothing expires while a driver
-- runs, whatever the machine's load.
--
-- Reads and flow control.  A read is durable (SPEC §16): when the
-- savepoint that read rolls back, the read still counts for its memtx
-- transaction, kept in a shared buffer until the transaction commits.  A
-- search that undoes each call by rolling back its subtransaction therefore
-- cannot undo a read: a read in one branch would be a parent (§4 3c) of
-- what a sibling branch commits.  So the enumeration runs with
-- memtx.flow_control = declared (3c judges declared parents only, and the
-- model is told so): a read's result is compared, its read set judges
-- nothing.  Flow control through the read set is the random traces' and
-- the histories' to check.  Every read of a rolled-back branch also keeps
-- its units of the shared buffer (memtx.read_set_buffer) until the server
-- restarts: a long search with many reads needs a server with a larger
-- buffer (run-c warns).

CREATE SCHEMA IF NOT EXISTS memtx_enum;

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memtx_enum_a') THEN
        CREATE ROLE memtx_enum_a NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memtx_enum_b') THEN
        CREATE ROLE memtx_enum_b NOLOGIN;
    END IF;
    -- every session of this database (the drivers' own) starts with these
    EXECUTE format('ALTER DATABASE %I SET memtx.lease_timeout = %L',
                   current_database(), '1d');
    EXECUTE format('ALTER DATABASE %I SET memtx.logical_now = %L',
                   current_database(), '2031-01-01 10:00+00');
    EXECUTE format('ALTER DATABASE %I SET memtx.flow_control = %L',
                   current_database(), 'declared');
    PERFORM memtx.register_source('crm', 0.7);
    PERFORM memtx.register_source('crm2', 0.7);
    PERFORM memtx.register_tool('refund', false);
    PERFORM memtx.register_tool('note', true, 'undo_note');
END
$$;
SET memtx.lease_timeout = '1d';
SET memtx.logical_now = '2031-01-01 10:00+00';
SET memtx.flow_control = 'declared';

-- Labels: a transaction's or record's number in id order, as state()
-- numbers them.  Volatile, so that a probe sees the call it wraps (the
-- statement's own snapshot would not); security definer (its owner is the
-- superuser that runs this script), so that row-level security does not
-- hide rows from the count when the caller is an agent.
CREATE FUNCTION memtx_enum.lt(id bigint) RETURNS text
    LANGUAGE sql VOLATILE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$ SELECT 'T' || count(*) FROM memtx.transactions x WHERE x.id <= lt.id $$;

CREATE FUNCTION memtx_enum.lr(id bigint) RETURNS text
    LANGUAGE sql VOLATILE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$ SELECT 'R' || count(*) FROM memtx.records x WHERE x.id <= lr.id $$;

-- A set of records: "[R1,R3]" in id order.
CREATE FUNCTION memtx_enum.lrs(ids bigint[]) RETURNS text
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$ SELECT '[' || coalesce(string_agg(memtx_enum.lr(i), ',' ORDER BY i), '') || ']'
        FROM unnest(ids) i $$;

-- Repair rows (record_id, action, reason) in canonical form, by record.
CREATE FUNCTION memtx_enum.repairs(rows memtx.rollback_log[]) RETURNS text
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
AS $$ SELECT coalesce(string_agg(memtx_enum.lr(r.record_id) || ' ' || r.action || ' ' || r.reason,
                                 '; ' ORDER BY r.record_id, r.action), '')
        FROM unnest(rows) r $$;

-- The probes run as the calls' agents: they may use the labels (which
-- show nothing but counts; this schema exists in the enumeration database
-- only).
GRANT USAGE ON SCHEMA memtx_enum TO PUBLIC;
GRANT EXECUTE ON FUNCTION memtx_enum.lt(bigint), memtx_enum.lr(bigint),
    memtx_enum.lrs(bigint[]), memtx_enum.repairs(memtx.rollback_log[]) TO PUBLIC;

-- The calls enabled now, in a deterministic order (see the alphabets above).
CREATE FUNCTION memtx_enum.actions(max_records int, max_tx int, alphabet text DEFAULT 'papers')
    RETURNS TABLE (caller text, call jsonb, stmt text, label text, probe text)
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    extra boolean := alphabet = 'memtx';
BEGIN
    IF alphabet NOT IN ('papers', 'memtx') THEN
        RAISE EXCEPTION 'unknown alphabet %', alphabet USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY WITH tx AS (
        SELECT t.id, t.agent, t.status::text AS status,
               'T' || row_number() OVER (ORDER BY t.id) AS l,
               CASE t.agent WHEN 'memtx_enum_a' THEN 'crm' ELSE 'crm2' END AS source
          FROM memtx.transactions t),
    rec AS (
        SELECT r.id, r.owner, r.state::text AS state, r.reason, r.kind::text AS kind,
               r.attribute, r.value::text AS value, r.erased_at IS NOT NULL AS erased,
               'R' || row_number() OVER (ORDER BY r.id) AS l
          FROM memtx.records r),
    belief AS (SELECT * FROM rec WHERE kind <> 'tool_action'),
    -- used slots, then the first unused; per slot used values, then the first unused
    slots AS (SELECT CASE WHEN extra THEN ARRAY['s1', 's2'] ELSE ARRAY['s1'] END AS names),
    slot AS (
        SELECT a AS attribute, k FROM slots, unnest(slots.names) WITH ORDINALITY u(a, k)
         WHERE a IN (SELECT attribute FROM belief)
            OR a = (SELECT min(b) FROM slots, unnest(slots.names) v(b)
                     WHERE b NOT IN (SELECT attribute FROM belief))),
    -- memtx: the values used on the slot and the first unused one; papers:
    -- each agent's own (filtered by agent below)
    val AS (
        SELECT s.attribute, s.k, v AS value, j
          FROM slot s, unnest(ARRAY['1', '2']) WITH ORDINALITY u(v, j)
         WHERE NOT extra
            OR v IN (SELECT value FROM belief b WHERE b.attribute = s.attribute)
            OR v = (SELECT min(w) FROM unnest(ARRAY['1', '2']) x(w)
                     WHERE w NOT IN (SELECT value FROM belief b WHERE b.attribute = s.attribute))),
    -- parentless: high or low confidence (papers: high); derived: high
    -- confidence, belief or summary (papers: belief)
    derivation AS (
        SELECT NULL::bigint AS parent, NULL::text AS pl, 'belief' AS kind, c.conf, c.o
          FROM (VALUES (1.0, 0), (0.3, 1)) c(conf, o)
         WHERE extra OR c.o = 0
        UNION ALL
        SELECT b.id, b.l, k.kind, 1.0, k.o
          FROM belief b, (VALUES ('belief', 2), ('summary', 3)) k(kind, o)
         WHERE extra OR k.o = 2),
    fenced AS (
        SELECT coalesce((SELECT w.unfenced_at IS NULL FROM memtx.writer_epochs w
                          WHERE w.role_name = 'memtx_enum_b' ORDER BY w.epoch DESC LIMIT 1),
                        false) AS b),
    calls AS (
        -- begin
        SELECT 1 AS grp, 0::bigint AS i1, b.o AS i2, 0::bigint AS i3, 0 AS i4, 0 AS i5,
               NULL::text AS caller,
               jsonb_build_object('op', 'begin', 'caller', 'harness', 'agent', b.agent,
                                  'tier', b.tier, 'isolation', b.iso,
                                  'short_lease', false) AS call,
               format('SELECT memtx.begin(tier => %L, agent => %L, isolation => %L)',
                      b.tier, b.agent, b.iso) AS stmt,
               format('begin %s %s %s', b.agent, b.tier, coalesce(b.iso, '-')) AS label,
               format('SELECT memtx_enum.lt(memtx.begin(tier => %L, agent => %L, isolation => %L))',
                      b.tier, b.agent, b.iso) AS probe
          FROM (VALUES (1, 'memtx_enum_a', 'low', NULL),
                       (2, 'memtx_enum_b', 'external_action', NULL),
                       (3, 'memtx_enum_b', 'low', 'raw_read')) b(o, agent, tier, iso)
         WHERE (SELECT count(*) FROM tx) < max_tx
           -- papers: the transactions alternate between the two agents
           AND (extra OR b.o = 1 + (SELECT count(*) FROM tx) % 2)
        UNION ALL
        -- read
        SELECT 2, t.id, 0, 0, 0, 0, t.agent,
               jsonb_build_object('op', 'read', 'caller', t.agent, 'tx', t.id,
                                  'entity', NULL, 'attribute', NULL),
               format('SELECT id FROM memtx.read(%s)', t.id),
               format('read %s', t.l),
               format('SELECT memtx_enum.lrs(ARRAY(SELECT id FROM memtx.read(%s)))', t.id)
          FROM tx t
         WHERE t.status IN ('open', 'committed', 'partially_committed')
        UNION ALL
        -- stage
        SELECT 3, t.id, v.k::int, coalesce(d.parent, 0), d.o, v.j::int,
               t.agent,
               jsonb_build_object('op', 'stage', 'caller', t.agent, 'tx', t.id,
                                  'entity', 'e', 'attribute', v.attribute,
                                  'value', v.value, 'kind', d.kind, 'source', t.source,
                                  'confidence', d.conf,
                                  'parents', CASE WHEN d.parent IS NULL THEN '[]'::jsonb
                                                  ELSE jsonb_build_array(d.parent) END,
                                  'scope', 'public', 'readers', NULL, 'writers', NULL,
                                  'valid', NULL, 'observed_at', NULL,
                                  'expected_head', NULL, 'proposal', NULL),
               format('SELECT memtx.stage(%s)', s.args),
               format('stage %s %s=%s %s %s %s', t.l, v.attribute, v.value, d.kind, d.conf,
                      coalesce(d.pl, '-')),
               format('SELECT memtx_enum.lr(memtx.stage(%s))', s.args)
          FROM tx t, val v, derivation d,
               LATERAL (SELECT format('tx => %s, entity => %L, attribute => %L,'
                                      ' value => %L::jsonb, kind => %L::memtx.kind, source => %L,'
                                      ' confidence => %s, derived_from => %L::bigint[],'
                                      ' scope => %L::memtx.scope',
                                      t.id, 'e', v.attribute, v.value, d.kind, t.source, d.conf,
                                      CASE WHEN d.parent IS NULL THEN '{}' ELSE '{' || d.parent || '}' END,
                                      'public') AS args) s
         WHERE t.status = 'open' AND (SELECT count(*) FROM belief) < max_records
           AND (extra OR v.value = CASE t.agent WHEN 'memtx_enum_a' THEN '1' ELSE '2' END)
        UNION ALL
        -- commit, abort
        SELECT 4, t.id, e.o, 0, 0, 0, t.agent,
               jsonb_build_object('op', e.op, 'caller', t.agent, 'tx', t.id),
               format(e.q, t.id),
               format('%s %s', e.op, t.l),
               format(e.p, t.id)
          FROM tx t,
               (VALUES (1, 'commit', 'SELECT record_id, state::text, reason FROM memtx.commit(%s)',
                        'SELECT coalesce(string_agg(memtx_enum.lr(c.record_id) || '' '' || c.state'
                        ' || '' '' || coalesce(c.reason, ''-''), ''; '' ORDER BY c.o), '''')'
                        ' FROM memtx.commit(%s) WITH ORDINALITY c(record_id, state, reason, o)'),
                       (2, 'abort', 'SELECT record_id, action, reason FROM memtx.abort(%s)',
                        'SELECT memtx_enum.repairs(ARRAY(SELECT r FROM memtx.abort(%s) r))'))
                   e(o, op, q, p)
         WHERE t.status = 'open'
        UNION ALL
        -- revoke
        SELECT 5, r.id, 0, 0, 0, 0, r.owner,
               jsonb_build_object('op', 'revoke', 'caller', r.owner, 'record', r.id),
               format('SELECT record_id, action, reason FROM memtx.revoke(%s, %L)', r.id, 'n'),
               format('revoke %s', r.l),
               format('SELECT memtx_enum.repairs(ARRAY(SELECT x FROM memtx.revoke(%s, %L) x))',
                      r.id, 'n')
          FROM rec r
         WHERE r.state <> 'revoked'
        UNION ALL
        -- act
        SELECT 6, t.id, l.o, coalesce(i.id, 0), 0, 0, t.agent,
               jsonb_build_object('op', 'act', 'caller', t.agent, 'tx', t.id,
                                  'tool', l.tool, 'args', '{"n": 1}',
                                  'inputs', CASE WHEN i.id IS NULL THEN '[]'::jsonb
                                                 ELSE jsonb_build_array(i.id) END,
                                  'effect_key', NULL),
               format('SELECT allowed, reason, action_id, blockers, repeated FROM memtx.act(%s)', s.args),
               format('act %s %s %s', t.l, l.tool, coalesce(i.l, '-')),
               format('SELECT format(''%%s %%s %%s %%s'', CASE WHEN allowed THEN ''true'' ELSE ''false'' END, coalesce(reason, ''-''),'
                      ' coalesce(memtx_enum.lr(action_id), ''-''), memtx_enum.lrs(blockers))'
                      ' FROM memtx.act(%s)', s.args)
          FROM tx t, (VALUES (1, 'refund'), (2, 'note')) l(o, tool),
               (SELECT NULL::bigint AS id, NULL::text AS l UNION ALL SELECT id, l FROM belief) i,
               LATERAL (SELECT format('tx => %s, tool => %L, args => %L::jsonb,'
                                      ' derived_from => %L::bigint[], effect_key => NULL',
                                      t.id, l.tool, '{"n": 1}',
                                      CASE WHEN i.id IS NULL THEN '{}' ELSE '{' || i.id || '}' END)
                            AS args) s
         WHERE t.status IN ('open', 'committed', 'partially_committed')
           AND (extra OR l.tool = 'refund')
           AND NOT EXISTS (SELECT 1 FROM memtx.records a
                            WHERE a.tx_id = t.id AND a.kind = 'tool_action')
        UNION ALL
        -- (memtx) resolve
        SELECT 7, r.id, a.o, 0, 0, 0, NULL,
               jsonb_build_object('op', 'resolve', 'caller', 'harness', 'record', r.id,
                                  'accept', a.accept),
               format('SELECT memtx.resolve(%s, %s)::text', r.id, a.accept::text),
               format('resolve %s %s', r.l, a.accept::text),
               format('SELECT memtx.resolve(%s, %s)::text', r.id, a.accept::text)
          FROM rec r, (VALUES (1, true), (2, false)) a(o, accept)
         WHERE extra AND r.state = 'quarantined' AND r.reason = 'needs_review'
        UNION ALL
        -- gate
        SELECT 8, t.id, 0, 0, 0, 0, t.agent,
               jsonb_build_object('op', 'gate', 'caller', t.agent, 'tx', t.id, 'tool', 'refund'),
               format('SELECT allowed, reason, blockers FROM memtx.gate(%s, %L)', t.id, 'refund'),
               format('gate %s refund', t.l),
               format('SELECT format(''%%s %%s %%s'', CASE WHEN allowed THEN ''true'' ELSE ''false'' END, coalesce(reason, ''-''),'
                      ' memtx_enum.lrs(blockers)) FROM memtx.gate(%s, %L)', t.id, 'refund')
          FROM tx t
         WHERE t.status IN ('open', 'committed', 'partially_committed')
        UNION ALL
        -- (memtx) fence, unfence
        SELECT 9, 0, 0, 0, 0, 0, NULL,
               jsonb_build_object('op', CASE WHEN f.b THEN 'unfence' ELSE 'fence' END,
                                  'caller', 'harness', 'role', 'memtx_enum_b'),
               format('SELECT memtx.%s(%L)', CASE WHEN f.b THEN 'unfence' ELSE 'fence' END,
                      'memtx_enum_b'),
               CASE WHEN f.b THEN 'unfence memtx_enum_b' ELSE 'fence memtx_enum_b' END,
               format('SELECT coalesce(memtx.%s(%L)::text, '''')',
                      CASE WHEN f.b THEN 'unfence' ELSE 'fence' END, 'memtx_enum_b')
          FROM fenced f
         WHERE extra
        UNION ALL
        -- (memtx) erase
        SELECT 10, r.id, 0, 0, 0, 0, NULL,
               jsonb_build_object('op', 'erase', 'caller', 'harness', 'record', r.id,
                                  'note', NULL),
               format('SELECT record_id, action, reason FROM memtx.erase(%s)', r.id),
               format('erase %s', r.l),
               format('SELECT memtx_enum.repairs(ARRAY(SELECT x FROM memtx.erase(%s) x))', r.id)
          FROM rec r
         WHERE extra AND NOT r.erased)
    SELECT c.caller, c.call, c.stmt, c.label, c.probe FROM calls c
     ORDER BY c.grp, c.i1, c.i2, c.i3, c.i4, c.i5;
END
$$;
COMMENT ON FUNCTION memtx_enum.actions(int, int, text) IS
    'exhaustive enumeration: every call of the alphabet enabled now, in a deterministic order';

-- The canonical state.  Renamings, and why each is sound:
--   transactions T1.. and records R1.. in id (creation) order: ids are
--     opaque to the protocol except for their order, which the labels keep
--     (and sequences are not rolled back, so ids differ between branches);
--   slots S1.. in order of first appearance (the lowest record id on each):
--     the protocol compares entity and attribute only for equality, and the
--     alphabet offers every slot alike (stage's first unused slot);
--   values V1.. per slot in order of first appearance: values are compared
--     only for equality (canonical text) and only on one slot (rivals,
--     heads), never across slots, and the alphabet offers every value alike.
-- Everything else the protocol distinguishes is kept: per transaction its
-- agent, tier, isolation, status, snapshot (the records committed before
-- it began, and for raw_read those staged before it began: visibility and
-- stale_late_write depend on them) and whether a fence of its agent came
-- after it began ("fenced"); per record its transaction, slot and value
-- (or tool), kind, confidence class (>= 0.6 passes evidence), source,
-- parents, state and reason, whether it is erased, whether it has a
-- commit position ("seq": a record revoked after its commit keeps it, and
-- every transaction begun later has it in its snapshot, so a record revoked
-- before its commit and one revoked after are different states), and how many
-- rollback-log rows and compensation obligations name it; the revocation
-- registry; the writer epoch of agent b and whether it is fenced.  Left
-- out: what has no effect on later calls nor on what the drivers compare
-- (positions beyond their order, timestamps, the action log of blocked
-- calls, read sets — every record is public, so a read set never launders
-- —, receipts, history, stats).
CREATE FUNCTION memtx_enum.state() RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (WITH t AS (
        SELECT x.*, row_number() OVER (ORDER BY x.id) AS n FROM memtx.transactions x),
    r AS (
        SELECT x.*, row_number() OVER (ORDER BY x.id) AS n,
               (SELECT t.n FROM t WHERE t.id = x.tx_id) AS tn
          FROM memtx.records x),
    s AS (
        SELECT r.entity, r.attribute, row_number() OVER (ORDER BY min(r.id)) AS n
          FROM r WHERE r.kind <> 'tool_action' GROUP BY r.entity, r.attribute),
    v AS (
        SELECT r.entity, r.attribute, r.value::text AS value,
               row_number() OVER (PARTITION BY r.entity, r.attribute ORDER BY min(r.id)) AS n
          FROM r WHERE r.kind <> 'tool_action' AND r.erased_at IS NULL
         GROUP BY r.entity, r.attribute, r.value::text),
    tline AS (
        SELECT t.n, format('T%s %s %s %s %s snap[%s]%s%s', t.n, t.agent, t.tier, t.isolation,
                           t.status,
                           (SELECT string_agg('R' || r.n, ',' ORDER BY r.n) FROM r
                             WHERE r.tx_id <> t.id AND r.committed_xid IS NOT NULL
                               AND memtx.happened_before(r.committed_xid, r.committed_seq,
                                                         t.snapshot, t.snapshot_xid,
                                                         t.snapshot_seq)),
                           CASE WHEN t.isolation = 'raw_read' THEN
                               format(' staged[%s]',
                                      (SELECT string_agg('R' || r.n, ',' ORDER BY r.n) FROM r
                                        WHERE r.tx_id <> t.id
                                          AND memtx.happened_before(r.staged_xid, r.staged_pos,
                                                                    t.snapshot, t.snapshot_xid,
                                                                    t.snapshot_seq)))
                           ELSE '' END,
                           CASE WHEN t.epoch < memtx.writer_epoch(t.agent) THEN ' fenced'
                                ELSE '' END) AS line
          FROM t),
    rline AS (
        SELECT r.n, format('R%s T%s %s %s %s %s P[%s] %s/%s rb%s cp%s%s%s', r.n, r.tn,
                           CASE WHEN r.kind = 'tool_action' THEN r.entity
                                WHEN r.erased_at IS NOT NULL THEN
                                    (SELECT 'S' || s.n FROM s WHERE (s.entity, s.attribute)
                                                                   = (r.entity, r.attribute))
                                    || '=erased'
                                ELSE (SELECT 'S' || s.n FROM s WHERE (s.entity, s.attribute)
                                                                   = (r.entity, r.attribute))
                                     || '=V' || (SELECT v.n FROM v
                                                  WHERE (v.entity, v.attribute, v.value)
                                                      = (r.entity, r.attribute, r.value::text))
                           END,
                           r.kind,
                           CASE WHEN r.kind = 'tool_action' THEN '-'
                                WHEN r.confidence >= 0.6 THEN 'high' ELSE 'low' END,
                           coalesce(r.source, '-'),
                           (SELECT string_agg('R' || p.n, ',' ORDER BY p.n)
                              FROM memtx.edges e JOIN r p ON p.id = e.parent
                             WHERE e.child = r.id),
                           r.state, coalesce(r.reason, '-'),
                           (SELECT count(*) FROM memtx.rollback_log l WHERE l.record_id = r.id),
                           (SELECT count(*) FROM memtx.compensations c WHERE c.action_id = r.id),
                           CASE WHEN r.committed_xid IS NOT NULL THEN ' seq' ELSE '' END,
                           CASE WHEN r.erased_at IS NOT NULL AND r.kind = 'tool_action'
                                THEN ' erased' ELSE '' END)
                   AS line
          FROM r),
    epoch AS (
        SELECT w.epoch, w.unfenced_at IS NULL AS fenced FROM memtx.writer_epochs w
         WHERE w.role_name = 'memtx_enum_b' ORDER BY w.epoch DESC LIMIT 1)
    SELECT concat_ws(' | ',
                     (SELECT string_agg(line, ' | ' ORDER BY n) FROM tline),
                     (SELECT string_agg(line, ' | ' ORDER BY n) FROM rline),
                     'reg[' || coalesce((SELECT string_agg('R' || r.n, ',' ORDER BY r.n)
                                           FROM memtx.revocation_registry g
                                           JOIN r ON r.id = g.record_id), '') || ']',
                     (SELECT format('b E%s%s', e.epoch, CASE WHEN e.fenced THEN ' fenced' ELSE '' END)
                        FROM epoch e)));
END
$$;
COMMENT ON FUNCTION memtx_enum.state() IS
    'exhaustive enumeration: the canonical state (relabelled, slots and values by first appearance)';
