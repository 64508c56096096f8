/*
 * bench/sql/setup.sql — schema "bench": baseline tables and store builders.
 *
 * Run by bench/run as a superuser in a fresh database with memtx created.
 *
 * How stores are built (documented in bench/README.md):
 *  - The bulk of a store — committed, unrelated records — and the cascade
 *    graphs are written with INSERT ... SELECT straight into memtx.records and
 *    memtx.edges, as the superuser, inside one memtx transaction row per
 *    batch.  Going through memtx.stage/commit would cost minutes per million
 *    records (scenario 7 measures the commit of chains staged through it).
 *    Every bulk row is consistent with what the pipeline would have written:
 *    staged, settled and committed positions on the memtx clock, xid of the
 *    loading SQL transaction, verdict = state.  The loaders run with
 *    session_replication_role = replica (transaction-local), which skips the
 *    foreign-key triggers on rows that are consistent by construction; the
 *    indexes and the single-truth exclusion constraint are still maintained.
 *  - Records in flight (tentative) are staged through the API (memtx.begin +
 *    memtx.stage), in open transactions with a long lease.
 *  - Benchmarked writes always go through the API.
 */
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE SCHEMA bench;

SELECT memtx.register_source('bench', 0.8);
SELECT memtx.register_source('src1', 0.8);
SELECT memtx.register_source('src2', 0.7);
SELECT memtx.register_source('src3', 0.75);
SELECT memtx.register_source('src4', 0.75);
SELECT memtx.register_tool('deploy', false);

-- Scenario 1 baseline: last-writer-wins slot table.
CREATE TABLE bench.plain_slot (
    namespace  text NOT NULL,
    entity     text NOT NULL,
    attribute  text NOT NULL,
    value      jsonb NOT NULL,
    source     text,
    confidence double precision NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (namespace, entity, attribute)
);

-- Scenario 2 baseline: append-only records with a slot index.
CREATE TABLE bench.plain_batch (
    id         bigserial PRIMARY KEY,
    namespace  text NOT NULL,
    entity     text NOT NULL,
    attribute  text NOT NULL,
    value      jsonb NOT NULL,
    source     text,
    confidence double precision NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON bench.plain_batch (namespace, entity, attribute);

-- Scenarios 3, 4 baseline: the same store as a plain keyed table.
CREATE TABLE bench.plain_store (
    namespace text NOT NULL,
    entity    text NOT NULL,
    attribute text NOT NULL,
    value     jsonb NOT NULL,
    PRIMARY KEY (namespace, entity, attribute)
);

-- Scenario 5 baseline: the cascade graphs' rows, with their edges.
CREATE TABLE bench.plain_graph (
    id        bigint PRIMARY KEY,
    gid       integer NOT NULL,
    namespace text NOT NULL,
    entity    text NOT NULL,
    attribute text NOT NULL,
    value     jsonb NOT NULL,
    state     text NOT NULL,
    reason    text
);
CREATE INDEX ON bench.plain_graph (gid);
CREATE INDEX ON bench.plain_graph (namespace, entity, attribute);

CREATE TABLE bench.store_size (namespace text PRIMARY KEY, n bigint NOT NULL);
CREATE SEQUENCE bench.graph_id_seq;

/*
 * A committed memtx transaction row for a bulk load into ns, as memtx.begin
 * followed by an empty memtx.commit would leave it.
 */
CREATE FUNCTION bench.bulk_tx(ns text) RETURNS bigint
LANGUAGE sql AS $$
    INSERT INTO memtx.transactions (agent, tier, isolation, namespace, snapshot,
                                    snapshot_xid, snapshot_seq, status,
                                    lease_expires_at, ended_at)
    VALUES (current_user, 'medium', 'verified_read', ns, pg_current_snapshot(),
            pg_current_xact_id(), nextval('memtx.clock'), 'committed',
            clock_timestamp(), clock_timestamp())
    RETURNING id
$$;

/* Reserve n consecutive record ids; returns the first. */
CREATE FUNCTION bench.reserve_ids(n bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    first bigint := nextval('memtx.record_id_seq');
BEGIN
    PERFORM setval('memtx.record_id_seq', first + n - 1);
    RETURN first;
END $$;

/*
 * The committed memtx transaction rows of a bulk load of n records into ns
 * by agent: one per ten records, as agents writing through the API would
 * leave (a single transaction for the whole store would give the planner
 * statistics no real store has).  Record i (from 0) of the load belongs to
 * the returned id + i / 10.
 */
CREATE FUNCTION bench.bulk_txs(ns text, n bigint, agent text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    tx bigint := nextval('memtx.transaction_id_seq');
BEGIN
    PERFORM setval('memtx.transaction_id_seq', tx + (n - 1) / 10);
    INSERT INTO memtx.transactions (id, agent, tier, isolation, namespace, snapshot,
                                    snapshot_xid, snapshot_seq, status,
                                    lease_expires_at, ended_at)
    SELECT tx + k, agent, 'medium', 'verified_read', ns, pg_current_snapshot(),
           pg_current_xact_id(), nextval('memtx.clock'), 'committed',
           clock_timestamp(), clock_timestamp()
      FROM generate_series(0, (n - 1) / 10) k;
    RETURN tx;
END $$;

/*
 * Grow the store of namespace ns to n unrelated records, slots e<i>/a (in
 * namespace recall: scenario 8's generated sentences, bench.recall_filler), all
 * action_safe (so every isolation level sees them), in chains of ten
 * (record i derived from record i-1 unless i % 10 = 1): a read at
 * verified_read or stricter walks at most nine ancestors.  The plain store
 * gets the same slots.
 */
CREATE FUNCTION bench.grow_store(ns text, n bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    have  bigint;
    tx    bigint;
    first bigint;
    pos   bigint;
BEGIN
    SELECT s.n INTO have FROM bench.store_size s WHERE s.namespace = ns;
    have := coalesce(have, 0);
    IF n <= have THEN
        RETURN have;
    END IF;
    PERFORM set_config('session_replication_role', 'replica', true);
    tx := bench.bulk_txs(ns, n - have, current_user);
    first := bench.reserve_ids(n - have);
    pos := nextval('memtx.clock');
    INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, kind,
                               state, source, authority, confidence, owner, scope,
                               staged_xid, staged_pos, settled_xid, settled_pos,
                               committed_xid, committed_seq, verdict)
    SELECT first + (r.i - have - 1), tx + (r.i - have - 1) / 10, ns, r.entity, r.attribute, r.value, 'belief',
           'action_safe', 'bench', 0.8, 0.9, current_user, 'private',
           pg_current_xact_id(), pos, pg_current_xact_id(), pos,
           pg_current_xact_id(), pos, 'action_safe'
      FROM bench.store_rows(ns, have + 1, n) r;
    INSERT INTO memtx.edges (child, parent, namespace)
    SELECT first + (i - have - 1), first + (i - have - 2), ns
      FROM generate_series(have + 1, n) i
     WHERE i % 10 <> 1 AND i > have + 1;
    IF ns = 'recall' THEN
        INSERT INTO bench.plain_recall (id, entity, attribute, value)
        SELECT first + (r.i - have - 1), r.entity, r.attribute, r.value
          FROM bench.store_rows(ns, have + 1, n) r;
    ELSE
        INSERT INTO bench.plain_store (namespace, entity, attribute, value)
        SELECT ns, 'e' || i, 'a', to_jsonb(i) FROM generate_series(have + 1, n) i;
    END IF;
    INSERT INTO bench.store_size VALUES (ns, n)
        ON CONFLICT (namespace) DO UPDATE SET n = excluded.n;
    RETURN n;
END $$;

/*
 * Build a cascade graph in ns: a root and d committed belief descendants
 * (ids root+1 .. root+d), shaped
 *   chain    node k derived from node k-1 (node 0 is the root)
 *   fanout   every node derived from the root
 *   diamond  layers of 100; the first layer derived from the root, node p of
 *            a later layer from nodes p and p+1 (mod 100) of the layer
 *            above, so paths fork and rejoin
 * and the same d+1 rows in bench.plain_graph.  Returns the root id and the
 * graph id.
 */
CREATE FUNCTION bench.build_graph(ns text, shape text, d integer,
                                  OUT root bigint, OUT gid integer)
LANGUAGE plpgsql AS $$
DECLARE
    tx  bigint;
    pos bigint;
    w   constant integer := 100;
BEGIN
    PERFORM set_config('session_replication_role', 'replica', true);
    gid := nextval('bench.graph_id_seq');
    tx := bench.bulk_tx(ns);
    root := bench.reserve_ids(d + 1);
    pos := nextval('memtx.clock');
    INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, kind,
                               state, source, authority, confidence, owner, scope,
                               staged_xid, staged_pos, settled_xid, settled_pos,
                               committed_xid, committed_seq, verdict)
    SELECT root + k, tx, ns, 'g' || gid || '_' || k, 'a', to_jsonb(k), 'belief',
           'committed', 'bench', 0.8, 0.9, current_user, 'private',
           pg_current_xact_id(), pos, pg_current_xact_id(), pos,
           pg_current_xact_id(), pos, 'committed'
      FROM generate_series(0, d) k;
    IF shape = 'chain' THEN
        INSERT INTO memtx.edges (child, parent, namespace)
        SELECT root + k, root + k - 1, ns FROM generate_series(1, d) k;
    ELSIF shape = 'fanout' THEN
        INSERT INTO memtx.edges (child, parent, namespace)
        SELECT root + k, root, ns FROM generate_series(1, d) k;
    ELSIF shape = 'diamond' THEN
        -- node k (1-based) sits in layer (k-1)/w at position (k-1)%w
        INSERT INTO memtx.edges (child, parent, namespace)
        SELECT root + k, root, ns FROM generate_series(1, least(d, w)) k;
        INSERT INTO memtx.edges (child, parent, namespace)
        SELECT DISTINCT root + k, root + p, ns
          FROM generate_series(w + 1, d) k,
               LATERAL (VALUES (k - w),
                               (((k - 1) / w - 1) * w + ((k - 1) % w + 1) % w + 1)) AS v(p);
    ELSE
        RAISE EXCEPTION 'unknown graph shape %', shape;
    END IF;
    INSERT INTO bench.plain_graph (id, gid, namespace, entity, attribute, value, state)
    SELECT root + k, gid, ns, 'g' || gid || '_' || k, 'a', to_jsonb(k), 'committed'
      FROM generate_series(0, d) k;
END $$;

/* Time memtx.revoke(root); returns milliseconds and rows it returned. */
CREATE FUNCTION bench.timed_revoke(root bigint, OUT ms double precision, OUT nrows bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    SELECT count(*) INTO nrows FROM memtx.revoke(root, 'bench');
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

/*
 * Time scenario 5's floor on the graph of root (d descendants): the rows
 * memtx.revoke writes, by plain SQL into the same tables with no walk — the
 * records revoked, one rollback_log row each — then undo it all (a
 * subtransaction rolled back), so memtx.revoke finds the graph untouched.
 */
CREATE FUNCTION bench.timed_floor_revoke(root bigint, d integer, OUT ms double precision)
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    t0 timestamptz;
BEGIN
    BEGIN
        t0 := clock_timestamp();
        UPDATE memtx.records
           SET state = 'revoked', reason = CASE WHEN id = root THEN 'bench' ELSE 'revoked_parent' END,
               settled_xid = coalesce(settled_xid, pg_current_xact_id()),
               settled_pos = coalesce(settled_pos, nextval('memtx.clock'))
         WHERE id BETWEEN root AND root + d;
        INSERT INTO memtx.rollback_log (root_id, record_id, kind, action, reason, note, pos, namespace)
        SELECT root, r.id, r.kind, 'revoked',
               CASE WHEN r.id = root THEN 'bench' ELSE 'revoked_parent' END,
               CASE WHEN r.id = root THEN 'bench' END, nextval('memtx.clock'), r.namespace
          FROM memtx.records r
         WHERE r.id BETWEEN root AND root + d
         ORDER BY r.id;
        ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
        RAISE EXCEPTION USING ERRCODE = 'P0001', MESSAGE = 'bench: undo the floor';
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
END $$;

/* Time the baseline: one bulk UPDATE of the graph's rows. */
CREATE FUNCTION bench.timed_update(g integer, OUT ms double precision, OUT nrows bigint)
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    UPDATE bench.plain_graph SET state = 'revoked', reason = 'revoked_parent'
     WHERE gid = g;
    GET DIAGNOSTICS nrows = ROW_COUNT;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

/*
 * Scenario 7: stage d records through the API in one memtx transaction of
 * namespace ns — a chain (each derived from the one before) or, for the
 * baseline, d records without parents — then time its commit; returns
 * milliseconds and how many records committed.
 */
CREATE FUNCTION bench.timed_chain_commit(ns text, d integer, chained boolean,
                                         OUT ms double precision, OUT ncommitted bigint)
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    tx bigint := memtx.begin(namespace => ns);
    p bigint;
    t0 timestamptz;
BEGIN
    FOR i IN 1 .. d LOOP
        p := memtx.stage(tx, 'c' || tx || '_' || i, 'a', to_jsonb(i), source => 'bench',
                         confidence => 0.9,
                         derived_from => CASE WHEN chained AND p IS NOT NULL THEN ARRAY[p] ELSE '{}' END);
    END LOOP;
    t0 := clock_timestamp();
    SELECT count(*) FILTER (WHERE state = 'committed') INTO ncommitted FROM memtx.commit(tx);
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

/*
 * Stage n tentative records (slots t<i>/a) through the API in open
 * transactions of 100 records each, with a lease of a day; returns the ids.
 */
CREATE FUNCTION bench.stage_in_flight(ns text, n integer) RETURNS SETOF bigint
LANGUAGE plpgsql AS $$
DECLARE
    tx bigint;
BEGIN
    PERFORM set_config('memtx.lease_timeout', '86400', true);
    FOR i IN 0 .. n - 1 LOOP
        IF i % 100 = 0 THEN
            tx := memtx.begin(namespace => ns);
        END IF;
        RETURN NEXT memtx.stage(tx, 't' || i, 'a', to_jsonb(i),
                                source => 'bench', confidence => 0.9);
    END LOOP;
END $$;

/* Begin one transaction per isolation level (harness: the level is pinned). */
CREATE TABLE bench.read_tx (iso memtx.isolation PRIMARY KEY, tx bigint NOT NULL);
CREATE FUNCTION bench.begin_readers(ns text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('memtx.lease_timeout', '86400', true);
    DELETE FROM bench.read_tx;
    INSERT INTO bench.read_tx
    SELECT l, memtx.begin(namespace => ns, isolation => l)
      FROM unnest(enum_range(NULL::memtx.isolation)) l;
END $$;

/*
 * Scenario 1, one round trip: begin + stage + commit of one record in one
 * call, as an agent backend would wrap them in a function of its own.
 */
CREATE FUNCTION bench.memtx_write(ns text, e text, v jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    tx bigint;
BEGIN
    tx := memtx.begin(namespace => ns);
    PERFORM memtx.stage(tx, e, 'a', v, source => 'bench', confidence => 0.9);
    RETURN (SELECT count(*) FROM memtx.commit(tx));
END $$;

-- The transaction row of a floor (scenarios 1 and 2): what memtx.begin inserts.
CREATE FUNCTION bench.floor_tx(ns text) RETURNS bigint
LANGUAGE sql SET jit = off AS $$
    INSERT INTO memtx.transactions (agent, tier, isolation, namespace, snapshot,
                                    snapshot_xid, snapshot_seq, lease_expires_at)
    VALUES (current_user, 'medium', 'verified_read', ns, pg_current_snapshot(),
            pg_current_xact_id(), nextval('memtx.clock'), clock_timestamp() + interval '5 min')
    RETURNING id $$;

-- The receipts of a floor's records (what memtx.commit appends): a salt
-- and a commit receipt per record, unchained, as the pipeline leaves them.
CREATE FUNCTION bench.floor_receipts(tx bigint) RETURNS void
LANGUAGE sql SET jit = off AS $$
    INSERT INTO memtx.record_salts (record_id, namespace, salt)
    SELECT id, namespace, uuid_send(gen_random_uuid()) FROM memtx.records WHERE tx_id = tx;
    INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at)
    SELECT r.namespace, 'commit', r.id, r.verdict::text, NULL,
           jsonb_build_object('subject_is', 'record', 'tx', r.tx_id, 'record', r.id,
                              'value_digest', memtx.value_salted_digest(s.salt, r.value),
                              'staged_pos', r.staged_pos, 'settled_pos', r.settled_pos),
           memtx.now()
      FROM memtx.records r JOIN memtx.record_salts s ON s.record_id = r.id
     WHERE r.tx_id = tx ORDER BY r.id $$;

/*
 * Scenario 1's floor: the rows one memtx write leaves, written by plain SQL
 * into the same tables (same indexes, exclusion constraint, foreign keys and
 * lifecycle trigger) with no check at all: the transaction row, the record
 * inserted tentative, a lock on its slot, its active rivals superseded, the record taken through
 * validated to committed with its positions, the transaction closed.  What
 * PostgreSQL itself needs to store one governed write; memtx's cost over it
 * is the pipeline.
 */
CREATE FUNCTION bench.floor_write(ns text, e text, v jsonb) RETURNS bigint
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    tx  bigint;
    rid bigint;
    pos bigint;
BEGIN
    tx := bench.floor_tx(ns);
    INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, source, authority,
                               confidence, owner, staged_xid, staged_pos)
    VALUES (tx, ns, e, 'a', v, 'bench', 0.8, 0.9, current_user, pg_current_xact_id(),
            nextval('memtx.clock'))
    RETURNING id INTO rid;
    -- writers of one slot must take turns (memtx takes a slot lock too)
    PERFORM pg_advisory_xact_lock(memtx.slot_key(ns, e, 'a'));
    UPDATE memtx.records r SET state = 'superseded'
     WHERE memtx.slot_key(r.namespace, r.entity, r.attribute) = memtx.slot_key(ns, e, 'a')
       AND memtx.slot_digest(r.namespace, r.entity, r.attribute) = memtx.slot_digest(ns, e, 'a')
       AND r.valid && '(,)' AND r.state IN ('committed', 'action_safe')
       AND r.namespace = ns AND r.entity = e AND r.attribute = 'a';
    UPDATE memtx.records SET state = 'validated' WHERE id = rid;
    pos := nextval('memtx.clock');
    UPDATE memtx.records
       SET state = 'committed', committed_xid = pg_current_xact_id(), committed_seq = pos,
           settled_xid = pg_current_xact_id(), settled_pos = pos, verdict = 'committed'
     WHERE id = rid;
    PERFORM bench.floor_receipts(tx);
    UPDATE memtx.transactions SET status = 'committed', ended_at = clock_timestamp()
     WHERE id = tx;
    RETURN 1;
END $$;

/*
 * Scenario 2's floor: the rows of one memtx transaction of n records on
 * slots e<b+1>..e<b+n>, by plain SQL with no check, set-wise: the
 * transaction row, the records inserted tentative, one lock for the
 * namespace's slots (memtx escalates to one above 16 slots), their active
 * rivals superseded, the records taken through validated to committed with
 * their positions, the transaction closed.
 */
CREATE FUNCTION bench.floor_batch(ns text, b int, n int) RETURNS bigint
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    tx bigint;
BEGIN
    tx := bench.floor_tx(ns);
    INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, source, authority,
                               confidence, owner, staged_xid, staged_pos)
    SELECT tx, ns, 'e' || (b + g), 'a', to_jsonb(g), 'bench', 0.8, 0.9, current_user,
           pg_current_xact_id(), nextval('memtx.clock')
      FROM generate_series(1, n) g;
    PERFORM pg_advisory_xact_lock(hashtext(ns));
    UPDATE memtx.records r SET state = 'superseded'
      FROM memtx.records c
     WHERE c.tx_id = tx
       AND memtx.slot_key(r.namespace, r.entity, r.attribute) = memtx.slot_key(c.namespace, c.entity, c.attribute)
       AND memtx.slot_digest(r.namespace, r.entity, r.attribute) = memtx.slot_digest(c.namespace, c.entity, c.attribute)
       AND r.valid && c.valid AND memtx.is_active(r.state)
       AND r.namespace = c.namespace AND r.entity = c.entity AND r.attribute = c.attribute;
    UPDATE memtx.records SET state = 'validated' WHERE tx_id = tx;
    UPDATE memtx.records
       SET state = 'committed', committed_xid = pg_current_xact_id(), committed_seq = nextval('memtx.clock'),
           settled_xid = pg_current_xact_id(), settled_pos = currval('memtx.clock'), verdict = 'committed'
     WHERE tx_id = tx;
    PERFORM bench.floor_receipts(tx);
    UPDATE memtx.transactions SET status = 'committed', ended_at = clock_timestamp()
     WHERE id = tx;
    RETURN n;
END $$;

/*
 * Scenario 4, reads of many rows: namespace ns holds one entity "w" with n
 * attributes staged and committed through the API at the external_action
 * tier (action_safe, so every level sees them), in chains of ten (attribute
 * i derived from i-1 unless i % 10 = 1).  A read by entity or by namespace
 * returns all n, and at verified_read or stricter checks every one's
 * ancestry.  The plain store gets the same rows.
 */
CREATE FUNCTION bench.grow_wide(ns text, n int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    tx   bigint;
    prev bigint;
    id   bigint;
BEGIN
    tx := memtx.begin('external_action', namespace => ns);
    FOR i IN 1..n LOOP
        id := memtx.stage(tx, 'w', 'a' || i, to_jsonb(i), source => 'bench', confidence => 0.9,
                          derived_from => CASE WHEN i % 10 = 1 THEN '{}' ELSE ARRAY[prev] END);
        prev := id;
    END LOOP;
    PERFORM count(*) FROM memtx.commit(tx);
    INSERT INTO bench.plain_store (namespace, entity, attribute, value)
    SELECT ns, 'w', 'a' || i, to_jsonb(i) FROM generate_series(1, n) i;
    RETURN (SELECT count(*) FROM memtx.records WHERE namespace = ns AND state = 'action_safe');
END $$;
