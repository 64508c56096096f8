// MemtxStore's vector index (the `index` option PostgresStore takes, over
// memtx_vector): what a put embeds (fields, index: false, a put's own
// fields), search by vector and hybrid with their scores, thresholds and
// distance metrics, updates and deletes, the harness step, failures of the
// embedder, and the statements a put and a search are.  The stores connect
// as an ordinary agent role; the harness registers the models.  Needs
// pgvector >= 0.8.0: skipped without it, with the reason, except under CI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { MemtxStore } from '../src/store.js';
import { EmbeddingError } from '../src/memory.js';
import { freshDatabase } from './db.js';
import { countingEmbedder, cosine, dot, DIMS, l2, near, needsVector, serverVectorMissing, vectorOf } from './vector.js';

const database = 'memtx_node_store_vector';
const AGENT = 'store_vector_agent';
let db;
const missing = await serverVectorMissing();
const pools = [];
/** A pool of the test's, ended at the end (an idle client the database's drop ends is no error). */
function newPool(/** @type {pg.PoolConfig} */ options) {
  const p = new pg.Pool({ database, ...options });
  p.on('error', () => {});
  pools.push(p);
  return p;
}

before(async () => {
  db = await freshDatabase(database, [AGENT]);
  if (!missing) await db.harness.query('CREATE EXTENSION memtx_vector CASCADE');
});
after(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db?.drop();
});

const vtest = (/** @type {string} */ name, /** @type {() => Promise<void>} */ fn) => test(name, needsVector(missing), async () => {
  assert.equal(missing, null, missing ?? '');
  await fn();
});

let made = 0;
/**
 * A MemtxStore of the agent role in a memtx namespace of its own, with an
 * index of the given options (embed: a counting embedder); its models
 * registered by the harness unless `register` is false.
 */
async function agentStore(index = {}, { register = true, ...options } = {}) {
  made += 1;
  const embedder = countingEmbedder();
  const pool = newPool({ user: AGENT, password: db.password });
  await db.harness.query('SELECT memtx.grant_namespace($1, $2)', [`vector_case_${made}`, AGENT]);
  const store = new MemtxStore({ pool, namespace: `vector_case_${made}`,
    index: { dims: DIMS, embed: embedder.embed, model: `test-${made}`, ...index }, ...options });
  if (register) {
    for (const model of store.index.models) {
      await db.harness.query('SELECT memtx.register_embedding_model($1, $2, $3)', [model, DIMS, index.distanceMetric ?? 'cosine']);
    }
  }
  return { store, pool, embedder };
}

const keys = (items) => items.map((i) => i.key);

vtest('the harness step: a store without its model says which call registers it; setup() registers it only for a harness', async () => {
  const { store } = await agentStore({}, { register: false });
  const hint = /memtx\.register_embedding_model\('test-\d+', 9, 'cosine'\)/;
  await assert.rejects(store.put(['docs'], 'a', { text: 'a red cat' }), (err) => {
    assert.match(err.message, /embedding model test-\d+ is not registered/);
    assert.match(err.hint, hint);
    return true;
  });
  // nothing was written
  assert.equal(await store.get(['docs'], 'a'), null);
  // the agent's setup() cannot register it: the same message
  await assert.rejects(store.setup(), (err) => hint.test(err.hint));
  await assert.rejects(store.search(['docs'], { query: 'cat' }), /is not registered/);
  // a store on the harness's connection registers it in setup()
  const harness = newPool({});
  await new MemtxStore({ pool: harness, index: { dims: DIMS, embed: async (t) => t.map(vectorOf), model: store.index.models[0] } }).setup();
  const { rows } = await db.harness.query('SELECT dims, distance FROM memtx.embedding_models WHERE name = $1', [store.index.models[0]]);
  assert.deepEqual(rows, [{ dims: DIMS, distance: 'cosine' }]);
  // the agent's store now works (its failed check is not remembered)
  await store.put(['docs'], 'a', { text: 'a red cat' });
  assert.deepEqual(keys(await store.search(['docs'], { query: 'cat' })), ['a']);
  // a model registered with other dimensions is named as such
  const { store: other } = await agentStore({ model: store.index.models[0], dims: 4, embed: async (t) => t.map(() => [1, 0, 0, 0]) },
    { register: false });
  await assert.rejects(other.put(['docs'], 'b', { text: 'x' }), /registered with 9 dimensions and distance cosine; the store's index has 4 and cosine/);
});

vtest('search by vector: items by cosine similarity, each with its score; auto is vector with an index, text is recall', async () => {
  const { store, embedder } = await agentStore({ fields: ['text'] });
  const docs = { a: 'a red cat', b: 'a blue boat', c: 'a red car', d: 'cat and dog' };
  for (const [k, text] of Object.entries(docs)) await store.put(['docs'], k, { text, n: k });
  // each put embedded the field's text, once
  assert.deepEqual(embedder.calls, Object.values(docs).map((t) => [t]));
  const q = 'red cat';
  const want = Object.entries(docs).map(([k, t]) => [k, cosine(vectorOf(t), vectorOf(q))])
    .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
  for (const mode of ['vector', 'auto', undefined]) {
    const found = await store.search(['docs'], { query: q, ...(mode && { mode }) });
    assert.deepEqual(keys(found), want.map(([k]) => k), `mode ${mode}`);
    found.forEach((item, i) => near(item.score, want[i][1], `score of ${item.key}`));
    assert.deepEqual(found[0].value, { text: 'a red cat', n: 'a' });
    assert.ok(found[0].createdAt instanceof Date && found[0].updatedAt instanceof Date);
  }
  // the query was embedded once per vector search
  assert.equal(embedder.calls.length, 4 + 3);
  // text: memtx.recall's words, no embedding
  const text = await store.search(['docs'], { query: 'boat', mode: 'text' });
  assert.deepEqual(keys(text), ['b']);
  assert.equal(embedder.calls.length, 7);
  // limit, offset, a namespace prefix, a filter
  assert.deepEqual(keys(await store.search(['docs'], { query: q, limit: 2 })), want.slice(0, 2).map(([k]) => k));
  assert.deepEqual(keys(await store.search(['docs'], { query: q, limit: 2, offset: 1 })), want.slice(1, 3).map(([k]) => k));
  assert.deepEqual(keys(await store.search(['docs'], { query: q, filter: { n: 'c' } })), ['c']);
  assert.deepEqual(await store.search(['other'], { query: q }), []);
  await store.put(['docs', 'sub'], 'e', { text: 'red cat red cat' });
  assert.deepEqual(keys(await store.search(['docs', 'sub'], { query: q })), ['e']);
});

vtest('what a put embeds: the whole value by default, the index fields, a put\'s own fields, nothing with index: false', async () => {
  const whole = await agentStore();
  await whole.store.put(['n'], 'k', { title: 'fish', body: { words: ['dog'] } });
  assert.deepEqual(whole.embedder.calls, [[JSON.stringify({ title: 'fish', body: { words: ['dog'] } })]]);

  // two fields: two texts, under two models (the item ranks by the nearer)
  const two = await agentStore({ fields: ['title', 'tags[*]'], maxTexts: 3 });
  assert.equal(two.store.index.models.length, 3);
  await two.store.put(['n'], 'x', { title: 'plane', tags: ['dog', 'boat'] });
  assert.deepEqual(two.embedder.calls.at(-1), ['plane', 'dog', 'boat']);
  await two.store.put(['n'], 'y', { title: 'fish', tags: [] });
  assert.deepEqual(two.embedder.calls.at(-1), ['fish']);
  const [byTag] = await two.store.search(['n'], { query: 'boat' });
  assert.equal(byTag.key, 'x');
  near(byTag.score, cosine(vectorOf('boat'), vectorOf('boat')), 'the nearer text\'s similarity');
  // more texts than the store has models: refused before anything is written
  await assert.rejects(two.store.put(['n'], 'z', { title: 'a', tags: ['b', 'c', 'd'] }),
    /has 4 texts to embed .*at most 3 per item/);
  assert.equal(await two.store.get(['n'], 'z'), null);

  // a put's own fields replace the index's; index: false embeds nothing
  const some = await agentStore({ fields: ['title'] });
  await some.store.put(['n'], 'own', { title: 'fish', other: 'cat' }, ['other']);
  assert.deepEqual(some.embedder.calls.at(-1), ['cat']);
  const calls = some.embedder.calls.length;
  await some.store.put(['n'], 'none', { title: 'cat' }, false);
  assert.equal(some.embedder.calls.length, calls);
  // stored all the same, found without a query and by words, never by vector
  assert.deepEqual((await some.store.get(['n'], 'none')).value, { title: 'cat' });
  assert.deepEqual(keys(await some.store.search(['n'])).sort(), ['none', 'own']);
  assert.deepEqual(keys(await some.store.search(['n'], { query: 'cat', mode: 'text' })).sort(), ['none', 'own']);
  assert.deepEqual(keys(await some.store.search(['n'], { query: 'cat' })), ['own']);
  // a field the value lacks: nothing to embed, nothing embedded
  await some.store.put(['n'], 'empty', { other: 'dog' });
  assert.deepEqual(keys(await some.store.search(['n'], { query: 'dog' })), ['own']);
});

vtest('similarityThreshold keeps the items scoring at least that', async () => {
  const { store } = await agentStore({ fields: ['t'] });
  for (const [k, t] of [['a', 'cat'], ['b', 'cat dog'], ['c', 'boat plane car']]) await store.put(['d'], k, { t });
  const scores = Object.fromEntries(['cat', 'cat dog', 'boat plane car'].map((t, i) => ['abc'[i], cosine(vectorOf(t), vectorOf('cat'))]));
  const threshold = (scores.a + scores.b) / 2;
  assert.ok(scores.b < threshold && threshold < scores.a);
  assert.deepEqual(keys(await store.search(['d'], { query: 'cat', similarityThreshold: threshold })), ['a']);
  // (distances are single precision: a threshold a hair under b's score)
  assert.deepEqual(keys(await store.search(['d'], { query: 'cat', similarityThreshold: scores.b - 1e-6 })), ['a', 'b']);
  assert.deepEqual(keys(await store.search(['d'], { query: 'cat', similarityThreshold: 0 })), ['a', 'b', 'c']);
  assert.deepEqual(await store.search(['d'], { query: 'cat', similarityThreshold: 1.5 }), []);
  await assert.rejects(store.search(['d'], { query: 'cat', similarityThreshold: 'high' }), /similarityThreshold must be a number/);
});

vtest('distance metrics: the store\'s own and a search\'s, each scored as PostgresStore scores it', async () => {
  const docs = { a: 'cat', b: 'cat cat cat dog', c: 'boat' };
  const q = vectorOf('cat');
  for (const metric of ['cosine', 'l2', 'inner_product']) {
    const { store } = await agentStore({ fields: ['t'], distanceMetric: metric });
    for (const [k, t] of Object.entries(docs)) await store.put(['d'], k, { t });
    for (const asked of [undefined, 'cosine', 'l2', 'inner_product']) {
      const m = asked ?? metric;
      const scoreOf = (/** @type {string} */ t) => (m === 'cosine' ? cosine(vectorOf(t), q)
        : m === 'l2' ? 1 / (1 + l2(vectorOf(t), q)) : dot(vectorOf(t), q));
      const want = Object.entries(docs).map(([k, t]) => [k, scoreOf(t)]).sort((x, y) => y[1] - x[1]);
      const found = await store.search(['d'], { query: 'cat', ...(asked && { distanceMetric: asked }) });
      assert.deepEqual(keys(found), want.map(([k]) => k), `store ${metric}, search ${m}`);
      found.forEach((item, i) => near(item.score, want[i][1], `store ${metric}, search ${m}: ${item.key}`));
    }
    await assert.rejects(store.search(['d'], { query: 'cat', distanceMetric: 'manhattan' }), /distanceMetric must be one of/);
  }
  assert.throws(() => new MemtxStore({ index: { dims: DIMS, embed: async () => [], distanceMetric: 'hamming' } }),
    /index.distanceMetric must be one of cosine, l2, inner_product/);
});

vtest('hybrid: vectorWeight × similarity + (1 − vectorWeight) × the words\' rank; items only the words find come too', async () => {
  const { store } = await agentStore({ fields: ['t'] });
  // "zebra" is a word the embedder does not know: only recall's words find it
  for (const [k, t] of [['a', 'cat cat'], ['b', 'zebra boat'], ['c', 'plane']]) await store.put(['h'], k, { t });
  // (recall reads the words as web search syntax: either word)
  const query = 'cat or zebra';
  const q = vectorOf(query);
  const pure = await store.search(['h'], { query, mode: 'hybrid', vectorWeight: 1 });
  // weight 1: the similarity alone, over what the words match or the threshold (0) admits
  assert.deepEqual(keys(pure), ['a', 'b', 'c']);
  pure.forEach((item) => near(item.score, cosine(vectorOf({ a: 'cat cat', b: 'zebra boat', c: 'plane' }[item.key]), q)));
  const words = await store.search(['h'], { query, mode: 'hybrid', vectorWeight: 0 });
  // weight 0: the words' rank alone (a and b match one word each; c none, so 0)
  assert.ok(words.find((i) => i.key === 'c').score === 0);
  assert.ok(words.find((i) => i.key === 'b').score > 0);
  const mixed = await store.search(['h'], { query, mode: 'hybrid' });
  const rank = Object.fromEntries(words.map((i) => [i.key, i.score]));
  const sim = Object.fromEntries(pure.map((i) => [i.key, i.score]));
  for (const item of mixed) near(item.score, 0.7 * sim[item.key] + 0.3 * rank[item.key], `hybrid ${item.key}`);
  assert.deepEqual(keys(mixed), [...mixed].sort((x, y) => y.score - x.score).map((i) => i.key));
  // a threshold keeps the items the words match, and the others at least that similar
  assert.deepEqual(keys(await store.search(['h'], { query, mode: 'hybrid', similarityThreshold: 0.99 })).sort(), ['a', 'b']);
  await assert.rejects(store.search(['h'], { query, mode: 'hybrid', vectorWeight: 2 }), /vectorWeight must be a number from 0 to 1/);
  // without an index, vector and hybrid are refused as PostgresStore refuses them
  const plain = new MemtxStore({ pool: newPool({}) });
  await assert.rejects(plain.search(['h'], { query, mode: 'hybrid' }), /Hybrid search requested but vector search not configured/);
  await assert.rejects(plain.search(['h'], { query, mode: 'vector' }), /Vector search requested but not configured/);
});

vtest('an update embeds the new value (the old one is not found again); a delete takes the item out of the search', async () => {
  const { store, embedder } = await agentStore({ fields: ['t'] });
  await store.put(['u'], 'k', { t: 'cat' });
  await store.put(['u'], 'other', { t: 'boat' });
  assert.equal((await store.search(['u'], { query: 'cat', limit: 1 }))[0].key, 'k');
  await store.put(['u'], 'k', { t: 'plane' });
  assert.deepEqual(embedder.calls.at(-1), ['plane']);
  const found = await store.search(['u'], { query: 'plane' });
  assert.deepEqual(keys(found), ['k', 'other']);
  near(found[0].score, 1, 'the new value\'s similarity');
  assert.deepEqual(found[0].value, { t: 'plane' });
  // the item appears once, with its latest value only
  const cat = await store.search(['u'], { query: 'cat' });
  assert.deepEqual(cat.map((i) => i.value.t).sort(), ['boat', 'plane']);
  // the same value again: embedded again, under the new record
  await store.put(['u'], 'k', { t: 'plane' });
  assert.deepEqual(keys(await store.search(['u'], { query: 'plane' })), ['k', 'other']);
  await store.delete(['u'], 'k');
  assert.deepEqual(keys(await store.search(['u'], { query: 'plane' })), ['other']);
  // a batch: a put and a delete, one SQL transaction
  await store.batch([{ namespace: ['u'], key: 'n', value: { t: 'fish' } }, { namespace: ['u'], key: 'other', value: null }]);
  assert.deepEqual(keys(await store.search(['u'], { query: 'fish' })), ['n']);
});

vtest('an embedder that fails, or answers the wrong count or dimensions, writes nothing and says so', async () => {
  const failing = await agentStore({ fields: ['t'], embed: async () => { throw new Error('the model is down'); } });
  await assert.rejects(failing.store.put(['e'], 'k', { t: 'cat' }),
    (err) => err instanceof EmbeddingError && /index\.embed failed: the model is down/.test(err.message));
  assert.equal(await failing.store.get(['e'], 'k'), null);
  const short = await agentStore({ fields: ['t'], embed: async (texts) => texts.map(() => [1, 2]) });
  await assert.rejects(short.store.put(['e'], 'k', { t: 'cat' }), /vector 0 has 2 dimensions, not 9/);
  await assert.rejects(short.store.search(['e'], { query: 'cat' }), /dimension mismatch: expected 9, got 2/);
  assert.equal(await short.store.get(['e'], 'k'), null);
  const none = await agentStore({ fields: ['t'], embed: async () => [] });
  await assert.rejects(none.store.put(['e'], 'k', { t: 'cat' }), /answered 0 vectors for 1 text/);
  // in a batch, nothing of the batch is written
  await assert.rejects(failing.store.batch([{ namespace: ['e'], key: 'a', value: { other: 1 } },
    { namespace: ['e'], key: 'b', value: { t: 'x' } }]), EmbeddingError);
  assert.equal(await failing.store.get(['e'], 'a'), null);
});

vtest('a put with embeddings is one round trip, a vector or hybrid search one (after the store\'s first check)', async () => {
  const { store, pool } = await agentStore({ fields: ['t'] });
  const wire = { roundTrips: 0 };
  const counted = newPool({ user: AGENT, password: db.password, max: 1 });
  counted.on('connect', (client) => {
    const c = /** @type {any} */ (client).connection;
    for (const method of ['query', 'sync']) {
      const send = c[method].bind(c);
      c[method] = (...args) => { wire.roundTrips += 1; return send(...args); };
    }
  });
  const measured = new MemtxStore({ pool: counted, namespace: store.namespace, index: { dims: DIMS, embed: async (t) => t.map(vectorOf),
    fields: ['t'], model: store.index.models[0] } });
  await measured.put(['w'], 'first', { t: 'cat' });
  for (const [what, call] of [
    ['put', () => measured.put(['w'], 'k', { t: 'dog' })],
    ['put of a new value', () => measured.put(['w'], 'k', { t: 'fish' })],
    ['vector search', () => measured.search(['w'], { query: 'fish' })],
    ['hybrid search', () => measured.search(['w'], { query: 'fish', mode: 'hybrid' })],
    ['search by another metric', () => measured.search(['w'], { query: 'fish', distanceMetric: 'l2' })],
  ]) {
    wire.roundTrips = 0;
    await call();
    assert.equal(wire.roundTrips, 1, what);
  }
  // the put wrote the record and its embedding together; the searches wrote memtx transactions committed empty
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM memtx.records r JOIN memtx.embeddings e ON e.record_id = r.id
    WHERE r.namespace = $1`, [store.namespace]);
  assert.equal(rows[0].n, 3);
  const { rows: txs } = await db.harness.query(`SELECT count(*)::int AS n FROM memtx.transactions t
    WHERE t.namespace = $1 AND t.status = 'committed' AND NOT EXISTS (SELECT FROM memtx.records r WHERE r.tx_id = t.id)`, [store.namespace]);
  assert.equal(txs[0].n, 3);
});

vtest('a search sees only what the store\'s role may read', async () => {
  const { store } = await agentStore({ fields: ['t'] });
  await store.put(['s'], 'mine', { t: 'cat' });
  // the harness writes an item of another owner, private, into the same memtx namespace, embedded
  const { rows: [{ record_id: id }] } = await db.harness.query(`SELECT record_id FROM memtx.propose(entity => 's:', attribute => 'theirs',
    value => '{"t": "cat"}'::jsonb, namespace => $1)`, [store.namespace]);
  await db.harness.query('SELECT memtx.embed($1, $2, $3)', [id, store.index.models[0], `[${vectorOf('cat').join(',')}]`]);
  const harness = newPool({});
  const seeing = new MemtxStore({ pool: harness, namespace: store.namespace, index: { dims: DIMS, embed: async (t) => t.map(vectorOf),
    fields: ['t'], model: store.index.models[0] } });
  assert.deepEqual(keys(await seeing.search(['s'], { query: 'cat' })).sort(), ['mine', 'theirs']);
  assert.deepEqual(keys(await store.search(['s'], { query: 'cat' })), ['mine']);
});

vtest('the same items and scores as PostgresStore with the same index, for cosine and l2', async () => {
  const { PostgresStore } = await import('@langchain/langgraph-checkpoint-postgres/store');
  const docs = { a: 'a red cat', b: 'a blue boat', c: 'a red car and a red boat', d: 'cat and dog', e: 'plane' };
  for (const metric of ['cosine', 'l2']) {
    const index = { dims: DIMS, embed: async (/** @type {string[]} */ t) => t.map(vectorOf), fields: ['text'], distanceMetric: metric };
    const reference = new PostgresStore({ connectionOptions: { database }, schema: `reference_vector_${metric}`, index });
    await reference.setup();
    const { store } = await agentStore({ fields: ['text'], distanceMetric: metric });
    try {
      for (const [k, text] of Object.entries(docs)) {
        await reference.put(['docs'], k, { text });
        await store.put(['docs'], k, { text });
      }
      await reference.put(['docs'], 'off', { text: 'red cat' }, false);
      await store.put(['docs'], 'off', { text: 'red cat' }, false);
      for (const query of ['red cat', 'boat', 'dog plane', 'red red red']) {
        // (PostgresStore scores by cosine unless the search names a metric; MemtxStore by the index's)
        const want = await reference.search(['docs'], { query, mode: 'vector', limit: 10, distanceMetric: metric });
        const got = await store.search(['docs'], { query, mode: 'vector', limit: 10 });
        assert.deepEqual(got, await store.search(['docs'], { query, mode: 'vector', limit: 10, distanceMetric: metric }));
        const described = (/** @type {any[]} */ items) => items.map((i) => `${i.key} ${i.score.toFixed(4)}`);
        // the same items with the same scores; items of equal score may come in either order
        assert.deepEqual(described(got).sort(), described(want).sort(), `${metric}: ${query}`);
        got.forEach((item, i) => near(item.score, want[i].score, `${metric}: ${query}: position ${i}`));
        const threshold = want[2].score;
        const above = { query, mode: 'vector', distanceMetric: metric, similarityThreshold: threshold - 1e-6 };
        // the items scoring at least the threshold (PostgresStore reads an l2 threshold as a largest distance)
        assert.deepEqual(keys(await store.search(['docs'], above)).sort(),
          keys(metric === 'cosine' ? await reference.search(['docs'], above) : want.filter((i) => i.score >= above.similarityThreshold)).sort(),
          `${metric}: ${query}: threshold`);
        if (metric === 'cosine') {
          // hybrid weighing the vectors alone: the vector search's items and scores again
          // (the words' ranks differ: PostgresStore ranks the value's text, MemtxStore memtx's recall document)
          const hybrid = { query, mode: 'hybrid', vectorWeight: 1 };
          const [mine, theirs] = [await store.search(['docs'], hybrid), await reference.search(['docs'], hybrid)];
          assert.deepEqual(described(mine).sort(), described(theirs).sort(), `hybrid: ${query}`);
        }
      }
    } finally {
      await reference.stop();
    }
  }
});
