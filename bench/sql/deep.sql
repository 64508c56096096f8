/*
 * bench/sql/deep.sql — scenario 7's second part: every operation on a deep
 * chain (SPEC §17, "Deep DAGs are linear").
 *
 * Run by bench/run as a superuser in a database of its own, fresh for each
 * chain length, with memtx created: the chains are the whole store, and
 * every plan is made on tables that start empty, as in a new install.
 */
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE SCHEMA bench_deep;

/*
 * Stage a chain of d records (each derived from the one before) through the
 * API in memtx transaction tx, as the records a1..ad of slots <prefix><i>/v;
 * returns the root's id.
 */
CREATE FUNCTION bench_deep.stage_chain(tx bigint, d integer, prefix text) RETURNS bigint
LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    p bigint;
    root bigint;
BEGIN
    FOR i IN 1 .. d LOOP
        p := memtx.stage(tx, prefix || i, 'v', to_jsonb(i), confidence => 0.9,
                         derived_from => CASE WHEN p IS NULL THEN '{}'::bigint[] ELSE ARRAY[p] END);
        root := coalesce(root, p);
    END LOOP;
    RETURN root;
END $$;

/*
 * Every operation of SPEC §17 on chains of d records, each timed inside the
 * server (clock_timestamp() around the call): chain a staged, committed, read
 * whole at verified_read, checked, revoked at its root, checked; chain b
 * staged and committed, then erased at its root; chain c staged and aborted;
 * the store checked last.  One row per operation: its name, milliseconds,
 * and what it returned (records committed, read, repaired; violations).
 */
CREATE FUNCTION bench_deep.chain_ops(d integer, OUT op text, OUT ms double precision, OUT n bigint)
RETURNS SETOF record LANGUAGE plpgsql SET jit = off AS $$
DECLARE
    tx bigint;
    root bigint;
    t0 timestamptz;
BEGIN
    tx := memtx.begin();
    t0 := clock_timestamp();
    root := bench_deep.stage_chain(tx, d, 'a');
    op := 'stage'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; n := d; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) FILTER (WHERE state = 'committed') INTO n FROM memtx.commit(tx);
    op := 'commit'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.read(memtx.begin(isolation => 'verified_read'));
    op := 'read, verified_read'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.check_invariants();
    op := 'check_invariants, committed'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.revoke(root);
    op := 'revoke of the root'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.check_invariants();
    op := 'check_invariants, revoked'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    tx := memtx.begin();
    root := bench_deep.stage_chain(tx, d, 'b');
    PERFORM count(*) FROM memtx.commit(tx);
    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.erase(root);
    op := 'erase of the root'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    tx := memtx.begin();
    PERFORM bench_deep.stage_chain(tx, d, 'c');
    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.abort(tx);
    op := 'abort'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;

    t0 := clock_timestamp();
    SELECT count(*) INTO n FROM memtx.check_invariants();
    op := 'check_invariants, three chains'; ms := extract(epoch FROM clock_timestamp() - t0) * 1000; RETURN NEXT;
END $$;
