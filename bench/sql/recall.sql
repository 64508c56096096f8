/*
 * bench/sql/recall.sql — scenario 8: ranking quality and latency of
 * memtx.recall against a plain GIN-indexed full-text SELECT.
 *
 * Run by bench/run after setup.sql, as a superuser.
 *
 * The store (namespace "recall") has two parts:
 *  - the labelled facts of bench/recall_queries.json (bench.recall_load):
 *    for each of its topics, the facts that answer its query, phrased in
 *    several ways, and distractors that share its words; staged and
 *    committed through the API, in an order that does not follow the file
 *    (so ties in rank, broken by id, favour neither kind);
 *  - generated filler (bench.recall_filler) that grows the store to 10k,
 *    100k, 1M records: short sentences about customers, orders, tickets and
 *    products built from word pools that overlap the queries' words, so
 *    bigger stores hold more near misses.  Bulk-loaded by bench.grow_store
 *    like scenario 3-5's store (action_safe, chains of ten).
 *
 * The baseline, bench.plain_recall, holds the same rows under the same ids,
 * with a GIN index over the document SPEC §14 defines; bench.plain_search is
 * the SELECT an application without memtx would run.  Its rows have no
 * lifecycle: the facts bench.recall_hide adds — tentative in another memtx
 * transaction, or committed and then revoked — are in it like any other.
 *
 * Quality: bench.recall_rank stores each query's top 8 (memtx or plain) in
 * bench.recall_hits; bench.recall_quality turns them into precision@1/5/8,
 * MRR and recall@8 against the labels (relevant = the topic's "relevant"
 * facts; distractors, filler and hidden facts are not relevant).
 */
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE TABLE bench.recall_topics (
    topic integer PRIMARY KEY,
    query text NOT NULL
);

CREATE TABLE bench.recall_facts (
    topic     integer NOT NULL REFERENCES bench.recall_topics,
    role      text NOT NULL CHECK (role IN ('relevant', 'distractor', 'tentative', 'revoked')),
    entity    text NOT NULL,
    attribute text NOT NULL,
    value     text NOT NULL,
    record_id bigint UNIQUE,
    PRIMARY KEY (entity, attribute)
);

-- The baseline: the same rows, same ids, a GIN index over the same document.
CREATE TABLE bench.plain_recall (
    id        bigint PRIMARY KEY,
    entity    text NOT NULL,
    attribute text NOT NULL,
    value     jsonb NOT NULL
);
CREATE INDEX plain_recall_doc ON bench.plain_recall
    USING gin (to_tsvector('english', entity || ' ' || attribute || ' ' || value::text));

-- One ranking per run (memtx, plain, ...) and topic: positions 1..k.
CREATE TABLE bench.recall_hits (
    run       text NOT NULL,
    topic     integer NOT NULL,
    pos       integer NOT NULL,
    record_id bigint NOT NULL,
    PRIMARY KEY (run, topic, pos)
);

/* The plain full-text SELECT (the same text as scripts/recall_plain.pgb). */
CREATE FUNCTION bench.plain_search(query text, k integer)
RETURNS TABLE (id bigint, entity text, attribute text, value jsonb, rank real)
LANGUAGE sql STABLE SET jit = off AS $$
    SELECT p.id, p.entity, p.attribute, p.value,
           ts_rank(to_tsvector('english', p.entity || ' ' || p.attribute || ' ' || p.value::text), q) AS rank
      FROM bench.plain_recall p, websearch_to_tsquery('english', query) q
     WHERE to_tsvector('english', p.entity || ' ' || p.attribute || ' ' || p.value::text) @@ q
     ORDER BY rank DESC, p.id
     LIMIT k
$$;

/*
 * Filler records lo..hi: sentences about customers, orders, tickets and
 * products, words drawn (by a hash of the record's number) from pools that
 * share words with the labelled queries (names, cities, products, colours,
 * topics) but not their labelled facts.  Entities are numbered from 100000
 * up, apart from the labelled ones.
 */
CREATE FUNCTION bench.recall_filler(lo bigint, hi bigint)
RETURNS TABLE (i bigint, entity text, attribute text, value jsonb)
LANGUAGE sql IMMUTABLE AS $$
    WITH pool AS MATERIALIZED (
        SELECT ARRAY['Anna', 'Ben', 'Carla', 'David', 'Elena', 'Felix', 'Grace', 'Hugo', 'Iris', 'Jonas',
                     'Karin', 'Luis', 'Maria', 'Nico', 'Olga', 'Pedro', 'Rita', 'Samir', 'Tara', 'Umar',
                     'Vera', 'Wen', 'Xavier', 'Yara', 'Zoe', 'Ada', 'Bruno', 'Chen', 'Marco', 'Priya'] AS first,
               ARRAY['Silva', 'Costa', 'Park', 'Lind', 'Sato', 'Rossi', 'Vogel', 'Nair', 'Obi', 'Novak',
                     'Berg', 'Moreau', 'Fischer', 'Ricci', 'Santos', 'Dubois', 'Keller', 'Horvat', 'Meyer', 'Bianchi',
                     'Ferreira', 'Lopez', 'Martin', 'Weber', 'Conti', 'Garcia', 'Kowalski', 'Petrov', 'Haddad',
                     'Mensah'] AS last,
               ARRAY['Lisbon', 'Porto', 'Madrid', 'Barcelona', 'Berlin', 'Paris', 'Rome', 'Milan', 'Vienna', 'Prague',
                     'Warsaw', 'Oslo', 'Dublin', 'Lyon', 'Seville', 'Valencia', 'Munich', 'Hamburg', 'Turin',
                     'Krakow'] AS city,
               ARRAY['email', 'phone calls', 'text messages', 'post', 'chat', 'email newsletters'] AS channel,
               ARRAY['blender', 'espresso machine', 'lamp shade', 'backpack', 'office chair', 'running shoes',
                     'coffee beans', 'dishwasher', 'ceramic vase', 'wine glasses', 'cushion covers', 'recipe box',
                     'gluten free bread', 'peanut butter', 'rain jacket', 'label printer', 'trail mix', 'grinder',
                     'kettle', 'toaster', 'desk', 'bookshelf', 'mattress', 'pillow', 'towels', 'candles', 'tea',
                     'teapot', 'frying pan', 'knife set'] AS product,
               ARRAY['dark green', 'green', 'navy', 'orange', 'blue', 'red', 'grey', 'black', 'white', 'yellow',
                     'purple', 'brown'] AS color,
               ARRAY['express', 'standard', 'next-day', 'economy'] AS speed,
               ARRAY['a refund', 'the warranty', 'an invoice', 'a delivery window', 'a discount', 'gift wrapping',
                     'tracking', 'a return label', 'loyalty points', 'a subscription', 'a payment reminder',
                     'installation', 'a replacement part', 'the size', 'an exchange', 'allergy information'] AS topic,
               ARRAY['refund issued', 'replacement sent', 'no action needed', 'discount applied', 'order cancelled',
                     'escalated', 'label emailed', 'appointment booked', 'answered by email',
                     'waiting for the customer'] AS outcome,
               ARRAY['dishwasher safe', 'fragile', 'recycled packaging', 'two-year warranty', 'vegan',
                     'water resistant', 'gift box', 'free shipping', 'monthly subscription', 'limited edition'] AS feature
    )
    SELECT g.i,
           (ARRAY['customer:', 'order:', 'ticket:', 'product:'])[1 + g.i % 4] || (100000 + g.i),
           (ARRAY['notes', 'items', 'summary', 'description'])[1 + g.i % 4],
           to_jsonb(CASE g.i % 4
               WHEN 0 THEN format('%s %s from %s prefers %s and buys %s.', w.first, w.last, w.city, w.channel, w.product)
               WHEN 1 THEN format('%s %s %s, %s shipping to %s.', 1 + g.i % 5, w.color, w.product, w.speed, w.city)
               WHEN 2 THEN format('Asked about %s for the %s; %s.', w.topic, w.product, w.outcome)
               ELSE format('%s in %s, %s.', initcap(w.product), w.color, w.feature)
           END)
      FROM generate_series(lo, hi) g(i), pool p,
           LATERAL (SELECT p.first[1 + abs(hashint8extended(g.i, 1)) % cardinality(p.first)] AS first,
                           p.last[1 + abs(hashint8extended(g.i, 2)) % cardinality(p.last)] AS last,
                           p.city[1 + abs(hashint8extended(g.i, 3)) % cardinality(p.city)] AS city,
                           p.channel[1 + abs(hashint8extended(g.i, 4)) % cardinality(p.channel)] AS channel,
                           p.product[1 + abs(hashint8extended(g.i, 5)) % cardinality(p.product)] AS product,
                           p.color[1 + abs(hashint8extended(g.i, 6)) % cardinality(p.color)] AS color,
                           p.speed[1 + abs(hashint8extended(g.i, 7)) % cardinality(p.speed)] AS speed,
                           p.topic[1 + abs(hashint8extended(g.i, 8)) % cardinality(p.topic)] AS topic,
                           p.outcome[1 + abs(hashint8extended(g.i, 9)) % cardinality(p.outcome)] AS outcome,
                           p.feature[1 + abs(hashint8extended(g.i, 10)) % cardinality(p.feature)] AS feature) w
$$;

/* Rows lo..hi of a bulk-loaded store in namespace ns (bench.grow_store). */
CREATE FUNCTION bench.store_rows(ns text, lo bigint, hi bigint)
RETURNS TABLE (i bigint, entity text, attribute text, value jsonb)
LANGUAGE sql IMMUTABLE AS $$
    SELECT g.i, 'e' || g.i, 'a', to_jsonb(g.i) FROM generate_series(lo, hi) g(i) WHERE ns <> 'recall'
    UNION ALL
    SELECT f.i, f.entity, f.attribute, f.value FROM bench.recall_filler(lo, hi) f WHERE ns = 'recall'
$$;

/*
 * Load the labelled topics and facts of doc (bench/recall_queries.json) and
 * stage and commit the relevant facts and distractors through the API in
 * one memtx transaction of ns; the plain table gets the same rows.  Returns
 * the number of records committed.
 */
CREATE FUNCTION bench.recall_load(ns text, doc jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    tx bigint;
    f  record;
    n  bigint;
BEGIN
    INSERT INTO bench.recall_topics (topic, query)
    SELECT t.n, t.v->>'query' FROM jsonb_array_elements(doc->'topics') WITH ORDINALITY t(v, n);
    INSERT INTO bench.recall_facts (topic, role, entity, attribute, value)
    SELECT t.n, r.role, r.f->>0, r.f->>1, r.f->>(CASE WHEN r.role IN ('relevant', 'distractor') THEN 2 ELSE 3 END)
      FROM jsonb_array_elements(doc->'topics') WITH ORDINALITY t(v, n),
           LATERAL (SELECT 'relevant', e FROM jsonb_array_elements(t.v->'relevant') e
                    UNION ALL
                    SELECT 'distractor', e FROM jsonb_array_elements(t.v->'distractors') e
                    UNION ALL
                    SELECT e->>2, e FROM jsonb_array_elements(t.v->'hidden') e) r(role, f);
    tx := memtx.begin(namespace => ns);
    FOR f IN SELECT * FROM bench.recall_facts WHERE role IN ('relevant', 'distractor')
              ORDER BY md5(entity || '/' || attribute) LOOP
        UPDATE bench.recall_facts
           SET record_id = memtx.stage(tx, f.entity, f.attribute, to_jsonb(f.value),
                                       source => 'bench', confidence => 0.9)
         WHERE entity = f.entity AND attribute = f.attribute;
    END LOOP;
    SELECT count(*) FILTER (WHERE c.state = 'committed') INTO n FROM memtx.commit(tx) c;
    INSERT INTO bench.plain_recall (id, entity, attribute, value)
    SELECT record_id, entity, attribute, to_jsonb(value) FROM bench.recall_facts WHERE record_id IS NOT NULL;
    INSERT INTO bench.store_size VALUES (ns, n);
    RETURN n;
END $$;

/*
 * Add the hidden facts through the API: the "tentative" ones staged in a
 * memtx transaction left open (lease one day; returned, so the caller can
 * abort it), the "revoked" ones staged, committed and revoked.  The plain
 * table gets them all.
 */
CREATE FUNCTION bench.recall_hide(ns text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    open_tx bigint;
    tx      bigint;
    f       record;
BEGIN
    PERFORM set_config('memtx.lease_timeout', '86400', true);
    open_tx := memtx.begin(namespace => ns);
    tx := memtx.begin(namespace => ns);
    FOR f IN SELECT * FROM bench.recall_facts WHERE role IN ('tentative', 'revoked')
              ORDER BY md5(entity || '/' || attribute) LOOP
        UPDATE bench.recall_facts
           SET record_id = memtx.stage(CASE WHEN f.role = 'tentative' THEN open_tx ELSE tx END,
                                       f.entity, f.attribute, to_jsonb(f.value),
                                       source => 'bench', confidence => 0.9)
         WHERE entity = f.entity AND attribute = f.attribute;
    END LOOP;
    PERFORM count(*) FROM memtx.commit(tx);
    PERFORM count(*) FROM bench.recall_facts h, LATERAL memtx.revoke(h.record_id, 'bench: wrong fact') r
      WHERE h.role = 'revoked';
    INSERT INTO bench.plain_recall (id, entity, attribute, value)
    SELECT record_id, entity, attribute, to_jsonb(value) FROM bench.recall_facts
     WHERE role IN ('tentative', 'revoked');
    RETURN open_tx;
END $$;

/*
 * Rank every topic's query as run `run`: through memtx.recall(tx, query, k)
 * when tx is given, else through the plain SELECT; the top k of each go
 * into bench.recall_hits.  Returns the number of rows stored.
 */
CREATE FUNCTION bench.recall_rank(run text, tx bigint, k integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM bench.recall_hits h WHERE h.run = recall_rank.run;
    IF tx IS NULL THEN
        INSERT INTO bench.recall_hits (run, topic, pos, record_id)
        SELECT recall_rank.run, t.topic, s.pos, s.id
          FROM bench.recall_topics t,
               LATERAL bench.plain_search(t.query, k) WITH ORDINALITY s(id, entity, attribute, value, rank, pos);
    ELSE
        INSERT INTO bench.recall_hits (run, topic, pos, record_id)
        SELECT recall_rank.run, t.topic, s.pos, s.record_id
          FROM bench.recall_topics t,
               LATERAL memtx.recall(tx, t.query, k) WITH ORDINALITY s(record_id, entity, attribute, value, rank, pos);
    END IF;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

/*
 * Ranking quality of run `run` against the labels, averaged over topics:
 * precision at 1, 5 and 8 (relevant hits in the top k / k), MRR (1 / the
 * position of the first relevant hit, 0 without one), recall at 8 (relevant
 * hits in the top 8 / the topic's relevant facts), and how many hidden facts
 * (tentative or revoked) the top 8s hold in all.
 */
CREATE FUNCTION bench.recall_quality(run text,
                                     OUT p1 numeric, OUT p5 numeric, OUT p8 numeric,
                                     OUT mrr numeric, OUT r8 numeric, OUT hidden bigint)
LANGUAGE sql STABLE AS $$
    WITH judged AS (
        SELECT t.topic, h.pos,
               CASE WHEN f.role = 'relevant' AND f.topic = t.topic THEN 'relevant'
                    WHEN f.role IN ('tentative', 'revoked') THEN 'hidden'
               END AS judge
          FROM bench.recall_topics t
          LEFT JOIN bench.recall_hits h ON h.run = recall_quality.run AND h.topic = t.topic
          LEFT JOIN bench.recall_facts f ON f.record_id = h.record_id
    ), per_topic AS (
        SELECT j.topic,
               count(*) FILTER (WHERE j.pos <= 1 AND j.judge = 'relevant') / 1.0 AS p1,
               count(*) FILTER (WHERE j.pos <= 5 AND j.judge = 'relevant') / 5.0 AS p5,
               count(*) FILTER (WHERE j.pos <= 8 AND j.judge = 'relevant') / 8.0 AS p8,
               coalesce(1.0 / min(j.pos) FILTER (WHERE j.judge = 'relevant'), 0) AS rr,
               count(*) FILTER (WHERE j.pos <= 8 AND j.judge = 'relevant')::numeric
                   / (SELECT count(*) FROM bench.recall_facts r WHERE r.topic = j.topic AND r.role = 'relevant') AS r8,
               count(*) FILTER (WHERE j.judge = 'hidden') AS hidden
          FROM judged j
         GROUP BY j.topic
    )
    SELECT round(avg(p1), 3), round(avg(p5), 3), round(avg(p8), 3), round(avg(rr), 3), round(avg(r8), 3),
           sum(hidden)::bigint
      FROM per_topic
$$;

/*
 * Topics whose top k differ between runs a and b, b's ranking taken without
 * its hidden facts (tentative or revoked) and cut to k: 0 when memtx.recall
 * (a) returns exactly the best k visible matches of the plain SELECT (b).
 */
CREATE FUNCTION bench.recall_differ(a text, b text, k integer) RETURNS bigint
LANGUAGE sql STABLE AS $$
    WITH bv AS (
        SELECT h.topic, row_number() OVER (PARTITION BY h.topic ORDER BY h.pos)::integer AS pos, h.record_id
          FROM bench.recall_hits h
          LEFT JOIN bench.recall_facts f ON f.record_id = h.record_id
         WHERE h.run = b AND f.role IS DISTINCT FROM 'tentative' AND f.role IS DISTINCT FROM 'revoked'
    ), bk AS (
        SELECT topic, pos, record_id FROM bv WHERE pos <= k
    ), ak AS (
        SELECT topic, pos, record_id FROM bench.recall_hits WHERE run = a
    )
    SELECT count(DISTINCT topic)
      FROM ((SELECT * FROM ak EXCEPT SELECT * FROM bk)
            UNION ALL
            (SELECT * FROM bk EXCEPT SELECT * FROM ak)) d
$$;

/* Matches per labelled query in the plain table: average and largest. */
CREATE FUNCTION bench.recall_matches(OUT avg_matches numeric, OUT max_matches bigint)
LANGUAGE sql STABLE AS $$
    SELECT round(avg(m.n), 1), max(m.n)
      FROM bench.recall_topics t,
           LATERAL (SELECT count(*) AS n
                      FROM bench.plain_recall p, websearch_to_tsquery('english', t.query) q
                     WHERE to_tsvector('english', p.entity || ' ' || p.attribute || ' ' || p.value::text) @@ q) m
$$;
