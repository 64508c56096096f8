/*
 * bench/sql/vector.sql — scenario 12: memtx.recall_similar (SPEC §19)
 * against exact search and against a plain pgvector query on the same rows.
 *
 * Run by bench/run's scenario 12 as a superuser, after setup.sql, in the
 * bench database with memtx_vector created (CREATE EXTENSION memtx_vector
 * CASCADE); needs pgvector >= 0.8.0.
 *
 * The store (namespace "vec", model "bench64": 64 dimensions, cosine):
 *  - synthetic embeddings drawn from a mixture of 128 clusters (each
 *    element its cluster's centre plus noise of about ±0.45), so
 *    neighbourhoods exist as they do in real embeddings;
 *  - committed records bulk-loaded like grow_store's (straight INSERTs as
 *    the superuser, one committed memtx transaction per ten records,
 *    action_safe, no ancestors), one embedding each; the model's HNSW index
 *    is dropped for a load and built again afterwards (a bulk build is
 *    several times faster than a million single inserts into the graph),
 *    with pgvector's defaults (m 16, ef_construction 64);
 *  - owners: one record in ten belongs to role bench_vec_reader, the others
 *    to bench_vec_other, all private; the reader's records are spread over
 *    every cluster, so near any query about one record in ten is its.  A transaction of bench_vec_all (a
 *    member of both) sees every record; one of bench_vec_reader sees 10% of
 *    the store, so the filtered case runs on the same rows and index.
 *
 * Queries: 100 further points of the same mixture (bench.vector_queries).
 * Truth: for each reader, the exact 10 nearest visible records of each
 * query (bench.vector_exact: the distance of the uncast column, which no
 * index answers, by (distance, id)).  recall@10 = the mean fraction of the
 * true 10 a method returns.
 *
 * The baselines run on the same table, the same index, the same rows:
 *  - bench.vector_plain: the floor, a plain pgvector query, ORDER BY the
 *    indexed expression <=> q LIMIT 10, joined to the records for their
 *    entity, attribute and value; it has no notion of visibility;
 *  - bench.vector_post_filter: the same, keeping the rows the reader may
 *    see afterwards (naive post-filtering);
 *  - bench.vector_plain_filtered: pgvector's own answer to filtering, the
 *    reader's rows (owner = the reader) in the WHERE clause with
 *    hnsw.iterative_scan = relaxed_order (its better recall), LIMIT 10.
 */
\set ON_ERROR_STOP on
SET client_min_messages = warning;

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bench_vec_reader') THEN
        CREATE ROLE bench_vec_reader;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bench_vec_other') THEN
        CREATE ROLE bench_vec_other;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bench_vec_all') THEN
        CREATE ROLE bench_vec_all IN ROLE bench_vec_reader, bench_vec_other;
    END IF;
END $$;

SELECT memtx.register_embedding_model('bench64', 64, 'cosine');

CREATE TABLE bench.vector_centroids (c integer PRIMARY KEY, v real[] NOT NULL);
CREATE TABLE bench.vector_queries (q integer PRIMARY KEY, v vector(64) NOT NULL);
-- a run's answers (memtx, a baseline, the truth), per reader and query: positions 1..k
CREATE TABLE bench.vector_hits (
    run       text NOT NULL,
    q         integer NOT NULL,
    pos       integer NOT NULL,
    record_id bigint NOT NULL,
    PRIMARY KEY (run, q, pos)
);

/* A point of cluster centre c: each element c[d] plus noise of about ±0.45. */
CREATE FUNCTION bench.vector_point(c real[]) RETURNS real[]
LANGUAGE sql VOLATILE AS $$
    SELECT array_agg(c[d] + 0.3 * (random() + random() + random() - 1.5) ORDER BY d)::real[]
      FROM generate_subscripts(c, 1) d
$$;

/* The clusters and the queries (seeded: the same in every run). */
CREATE FUNCTION bench.vector_init(dims integer, clusters integer, queries integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(0.42);
    INSERT INTO bench.vector_centroids
    SELECT c, (SELECT array_agg((random() * 2 - 1)::real) FROM generate_series(1, dims) WHERE c >= 0)
      FROM generate_series(0, clusters - 1) c;
    INSERT INTO bench.vector_queries
    SELECT q, bench.vector_point(v)::vector
      FROM generate_series(1, queries) q
      JOIN bench.vector_centroids ON c = (q * 37) % clusters;
END $$;

/*
 * Grow namespace ns to n embedded records (see the header), rebuilding the
 * model's index once at the end; returns n.
 */
CREATE FUNCTION bench.vector_grow(ns text, n bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    have     bigint;
    tx       bigint;
    first    bigint;
    pos      bigint;
    clusters integer := (SELECT count(*) FROM bench.vector_centroids);
    idx      text := memtx.embedding_index_name('bench64');
    def      text;
BEGIN
    SELECT s.n INTO have FROM bench.store_size s WHERE s.namespace = ns;
    have := coalesce(have, 0);
    IF n <= have THEN
        RETURN have;
    END IF;
    PERFORM setseed(have::double precision / n);
    PERFORM set_config('session_replication_role', 'replica', true);
    def := pg_get_indexdef(('memtx.' || idx)::regclass);
    EXECUTE format('DROP INDEX memtx.%I', idx);
    tx := bench.bulk_txs(ns, n - have, 'bench_vec_all');
    first := bench.reserve_ids(n - have);
    pos := nextval('memtx.clock');
    INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, kind,
                               state, source, authority, confidence, owner, scope,
                               staged_xid, staged_pos, settled_xid, settled_pos,
                               committed_xid, committed_seq, verdict)
    SELECT first + (i - have - 1), tx + (i - have - 1) / 10, ns, 'v' || i, 'a', to_jsonb('fact ' || i), 'belief',
           'action_safe', 'bench', 0.8, 0.9,
           CASE WHEN i % 10 = 0 THEN 'bench_vec_reader' ELSE 'bench_vec_other' END, 'private',
           pg_current_xact_id(), pos, pg_current_xact_id(), pos,
           pg_current_xact_id(), pos, 'action_safe'
      FROM generate_series(have + 1, n) i;
    INSERT INTO memtx.embeddings (record_id, namespace, model, embedding)
    SELECT first + (i - have - 1), ns, 'bench64', bench.vector_point(c.v)::vector
      FROM generate_series(have + 1, n) i
      -- the reader's tenth spread over every cluster (i * 7919 alone would put
      -- every tenth record in an even cluster)
      JOIN bench.vector_centroids c ON c.c = (i * 7919 + i / 10) % clusters;
    PERFORM set_config('maintenance_work_mem', '4GB', true);
    EXECUTE def;
    INSERT INTO bench.store_size VALUES (ns, n)
        ON CONFLICT (namespace) DO UPDATE SET n = excluded.n;
    RETURN n;
END $$;

/* A memtx transaction of agent in ns at verified_read, with a lease of a day. */
CREATE FUNCTION bench.vector_reader(ns text, agent text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('memtx.lease_timeout', '86400', true);
    RETURN memtx.begin(agent => agent, namespace => ns, isolation => 'verified_read');
END $$;

/* The exact k nearest records of ns visible to agent (every record for bench_vec_all). */
CREATE FUNCTION bench.vector_exact(ns text, agent text, q vector, k integer)
RETURNS TABLE (record_id bigint)
LANGUAGE sql STABLE AS $$
    SELECT e.record_id
      FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id AND r.namespace = e.namespace
     WHERE e.model = 'bench64' AND e.namespace = ns
       AND (agent = 'bench_vec_all' OR r.owner = agent)
     ORDER BY e.embedding <=> q, e.record_id
     LIMIT k
$$;

/* The floor: a plain pgvector query over the same index (the same text as scripts/vector_plain.pgb). */
CREATE FUNCTION bench.vector_plain(q vector, k integer)
RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, distance double precision)
LANGUAGE sql STABLE SET jit = off AS $$
    SELECT r.id, r.entity, r.attribute, r.value, e.d
      FROM (SELECT e.record_id, e.namespace, e.embedding::vector(64) <=> q AS d
              FROM memtx.embeddings e WHERE e.model = 'bench64'
             ORDER BY e.embedding::vector(64) <=> q LIMIT k) e
      JOIN memtx.records r ON r.id = e.record_id AND r.namespace = e.namespace
     ORDER BY e.d
$$;

/* Naive post-filtering: the plain query's k, then the rows agent may see. */
CREATE FUNCTION bench.vector_post_filter(q vector, k integer, agent text)
RETURNS TABLE (record_id bigint)
LANGUAGE sql STABLE SET jit = off AS $$
    SELECT p.record_id FROM bench.vector_plain(q, k) p JOIN memtx.records r ON r.id = p.record_id
     WHERE r.owner = agent ORDER BY p.distance
$$;

/* pgvector's filtered query: the reader's rows in the WHERE clause, iterative scan (scripts/vector_plain_filtered.pgb). */
CREATE FUNCTION bench.vector_plain_filtered(q vector, k integer, agent text)
RETURNS TABLE (record_id bigint, entity text, attribute text, value jsonb, distance double precision)
LANGUAGE sql STABLE SET jit = off SET hnsw.iterative_scan = relaxed_order AS $$
    SELECT r.id, r.entity, r.attribute, r.value, e.embedding::vector(64) <=> q
      FROM memtx.embeddings e JOIN memtx.records r ON r.id = e.record_id AND r.namespace = e.namespace
     WHERE e.model = 'bench64' AND r.owner = agent
     ORDER BY e.embedding::vector(64) <=> q LIMIT k
$$;

/*
 * Record run's answers for every query: method memtx (recall_similar in
 * transaction tx), exact, plain, post_filter or plain_filtered.
 */
CREATE FUNCTION bench.vector_rank(run text, method text, ns text, agent text, tx bigint, k integer)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM bench.vector_hits h WHERE h.run = vector_rank.run;
    IF method = 'memtx' THEN
        INSERT INTO bench.vector_hits
        SELECT run, qs.q, a.pos, a.record_id FROM bench.vector_queries qs,
               memtx.recall_similar(tx, qs.v, 'bench64', k) WITH ORDINALITY a(record_id, e, at, v, d, r, pos);
    ELSIF method = 'exact' THEN
        INSERT INTO bench.vector_hits
        SELECT run, qs.q, a.pos, a.record_id FROM bench.vector_queries qs,
               bench.vector_exact(ns, agent, qs.v, k) WITH ORDINALITY a(record_id, pos);
    ELSIF method = 'plain' THEN
        INSERT INTO bench.vector_hits
        SELECT run, qs.q, a.pos, a.record_id FROM bench.vector_queries qs,
               bench.vector_plain(qs.v, k) WITH ORDINALITY a(record_id, e, at, v, d, pos);
    ELSIF method = 'post_filter' THEN
        INSERT INTO bench.vector_hits
        SELECT run, qs.q, a.pos, a.record_id FROM bench.vector_queries qs,
               bench.vector_post_filter(qs.v, k, agent) WITH ORDINALITY a(record_id, pos);
    ELSIF method = 'plain_filtered' THEN
        INSERT INTO bench.vector_hits
        SELECT run, qs.q, a.pos, a.record_id FROM bench.vector_queries qs,
               bench.vector_plain_filtered(qs.v, k, agent) WITH ORDINALITY a(record_id, e, at, v, d, pos);
    ELSE
        RAISE EXCEPTION 'unknown method %', method;
    END IF;
END $$;

/*
 * recall@k of run against truth (the mean fraction of each query's true k
 * it returned), and the mean number of rows it returned per query.
 */
CREATE FUNCTION bench.vector_recall(run text, truth text, k integer,
                                    OUT recall numeric, OUT rows_per_query numeric)
LANGUAGE sql STABLE AS $$
    SELECT round(avg(coalesce(hit.n, 0))::numeric / k, 3),
           round(avg(coalesce(got.n, 0))::numeric, 1)
      FROM bench.vector_queries qs
      LEFT JOIN LATERAL (SELECT count(*) AS n FROM bench.vector_hits h
                          WHERE h.run = vector_recall.run AND h.q = qs.q
                            AND h.record_id IN (SELECT t.record_id FROM bench.vector_hits t
                                                 WHERE t.run = truth AND t.q = qs.q)) hit ON true
      LEFT JOIN LATERAL (SELECT count(*) AS n FROM bench.vector_hits h
                          WHERE h.run = vector_recall.run AND h.q = qs.q) got ON true
$$;

/* Whether run returned, for every query, only records agent may see (the memtx guarantee). */
CREATE FUNCTION bench.vector_leaks(run text, agent text) RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT count(*) FROM bench.vector_hits h JOIN memtx.records r ON r.id = h.record_id
     WHERE h.run = vector_leaks.run AND agent <> 'bench_vec_all' AND r.owner <> agent
$$;
