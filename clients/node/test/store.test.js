// MemtxStore against LangGraph's own PostgresStore, case by case, on one
// server.  The cases are the behaviours LangGraph's PostgresStore
// integration tests pin down (CRUD, batch, search, namespace listing) plus
// the edges around them; each runs on a fresh reference store (a schema of
// its own) and a fresh MemtxStore (a memtx namespace of its own), and the
// two must give the same result.  Where they may not, the case says why and
// asserts each side; InMemoryStore, the library's own semantics, sides with
// MemtxStore there.  The database is this file's own, dropped at the end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { InMemoryStore } from '@langchain/langgraph-checkpoint';
import { PostgresStore } from '@langchain/langgraph-checkpoint-postgres/store';
import { MemtxStore, PutRefused, encodeNamespace, decodeNamespace } from '../src/store.js';
import { freshDatabase } from './db.js';

const database = 'memtx_node_store';
const AGENTS = ['store_agent_a', 'store_agent_b'];
let db;
let admin;
let pool;

before(async () => {
  db = await freshDatabase(database, AGENTS);
  admin = db.harness;
  pool = new pg.Pool({ database });
});

after(async () => {
  await pool?.end();
  await db?.drop();
});

let made = 0;
/** A fresh reference store, MemtxStore and InMemoryStore; stop() ends them. */
async function freshStores() {
  made += 1;
  const reference = new PostgresStore({ connectionOptions: { database }, schema: `reference_${made}` });
  await reference.setup();
  const memtx = new MemtxStore({ pool, namespace: `langgraph_case_${made}` });
  await memtx.setup();
  const memory = new InMemoryStore();
  return { reference, memtx, memory, stop: () => reference.stop() };
}

/** An item as compared: namespace, key, value (its dates are checked here). */
function view(result) {
  if (Array.isArray(result)) return result.map(view);
  if (result && typeof result === 'object' && 'key' in result && 'createdAt' in result) {
    assert.ok(result.createdAt instanceof Date && result.updatedAt instanceof Date, 'dates are Dates');
    assert.ok(result.createdAt <= result.updatedAt, 'createdAt <= updatedAt');
    return { namespace: result.namespace, key: result.key, value: result.value };
  }
  return result;
}

/** { ok: view(result) } or { error: message } of one run of a case. */
async function outcome(store, { given, when }) {
  try {
    if (given) await given(store);
    return { ok: view(await when(store)) };
  } catch (err) {
    return { error: err.message };
  }
}

const keysOf = (r) => r.ok.map((item) => item.key);
const sorted = (a) => [...a].sort();

/**
 * One behaviour: `given` fills a store, `when` is the call compared,
 * `then` asserts the behaviour itself on the (shared) outcome.  A case with
 * `differs` is a deliberate difference: `why`, and the assertion on each side.
 */
function behaviour(name, spec) {
  test(name, async () => {
    const { reference, memtx, memory, stop } = await freshStores();
    try {
      const expected = await outcome(reference, spec);
      const got = await outcome(memtx, spec);
      if (spec.differs) {
        spec.differs.reference(expected);
        spec.differs.memtx(got);
        assert.notDeepEqual(got, expected, 'a listed difference that is no difference');
        if (spec.differs.memory !== false) assert.deepEqual(await outcome(memory, spec), got, 'InMemoryStore agrees with MemtxStore');
      } else {
        assert.deepEqual(got, expected);
        spec.then?.(got);
      }
    } finally {
      await stop();
    }
  });
}

// ---------------------------------------------------------------- CRUD

behaviour('put then get returns the item', {
  given: (s) => s.put(['crud', 'simple'], 'item1', { foo: 'bar', num: 42 }),
  when: (s) => s.get(['crud', 'simple'], 'item1'),
  then: (r) => assert.deepEqual(r.ok, { namespace: ['crud', 'simple'], key: 'item1', value: { foo: 'bar', num: 42 } }),
});

behaviour('a second put updates the value, keeps createdAt and moves updatedAt', {
  when: async (s) => {
    await s.put(['crud', 'update'], 'item2', { foo: 'bar' });
    const first = await s.get(['crud', 'update'], 'item2');
    await s.put(['crud', 'update'], 'item2', { foo: 'baz', extra: 123 });
    const second = await s.get(['crud', 'update'], 'item2');
    return [first.value, second.value, second.createdAt.getTime() === first.createdAt.getTime(),
      second.updatedAt > first.updatedAt];
  },
  then: (r) => assert.deepEqual(r.ok, [{ foo: 'bar' }, { foo: 'baz', extra: 123 }, true, true]),
});

behaviour('putting the same value again moves updatedAt; the item stays one item', {
  when: async (s) => {
    await s.put(['crud', 'same'], 'k', { v: 1 });
    const first = await s.get(['crud', 'same'], 'k');
    await s.put(['crud', 'same'], 'k', { v: 1 });
    const second = await s.get(['crud', 'same'], 'k');
    const found = await s.search(['crud']);
    await s.delete(['crud', 'same'], 'k');
    return [second.value, second.createdAt.getTime() === first.createdAt.getTime(),
      second.updatedAt > first.updatedAt, found.length, await s.get(['crud', 'same'], 'k')];
  },
  then: (r) => assert.deepEqual(r.ok, [{ v: 1 }, true, true, 1, null]),
});

behaviour('delete removes the item', {
  given: (s) => s.put(['crud', 'delete'], 'item3', { toDelete: true }),
  when: async (s) => { await s.delete(['crud', 'delete'], 'item3'); return s.get(['crud', 'delete'], 'item3'); },
  then: (r) => assert.equal(r.ok, null),
});

behaviour('deleting a missing item does nothing', {
  when: async (s) => { await s.delete(['crud', 'delete'], 'nothing'); return s.search(['crud']); },
  then: (r) => assert.deepEqual(r.ok, []),
});

behaviour('a put after a delete starts a new item (createdAt anew)', {
  when: async (s) => {
    await s.put(['crud', 'again'], 'k', { n: 1 });
    const first = await s.get(['crud', 'again'], 'k');
    await s.delete(['crud', 'again'], 'k');
    await s.put(['crud', 'again'], 'k', { n: 2 });
    const second = await s.get(['crud', 'again'], 'k');
    return [second.value, second.createdAt > first.createdAt];
  },
  then: (r) => assert.deepEqual(r.ok, [{ n: 2 }, true]),
});

const complexValue = {
  string: 'test', number: 42, boolean: true, null: null, array: [1, 2, 3, 'four'],
  nested: { deep: { value: 'nested data' } },
};
behaviour('complex JSON values round-trip', {
  given: (s) => s.put(['crud', 'complex'], 'item4', complexValue),
  when: async (s) => (await s.get(['crud', 'complex'], 'item4')).value,
  then: (r) => assert.deepEqual(r.ok, complexValue),
});

behaviour('get of a missing item is null', {
  when: (s) => s.get(['crud', 'missing'], 'nope'),
  then: (r) => assert.equal(r.ok, null),
});

for (const [label, namespace, message] of [
  ['an empty namespace', [], /Namespace cannot be empty/],
  ['a label with a period', ['invalid.namespace'], /Namespace labels cannot contain periods/],
  ['an empty label', ['valid', ''], /Namespace labels cannot be empty strings/],
  ['a label that is not a string', ['valid', 123], /Namespace labels must be strings/],
  ['the reserved root label', ['langgraph'], /Root label for namespace cannot be "langgraph"/],
]) {
  behaviour(`put refuses ${label}`, {
    when: (s) => s.put(namespace, 'key', { foo: 'bar' }),
    then: (r) => assert.match(r.error, message),
  });
}

behaviour('unicode labels, keys and values; dotted and spaced keys', {
  given: async (s) => {
    await s.put(['用户', 'élodie'], 'préférences.thème', { couleur: 'vert 🌿' });
    await s.put(['用户', 'élodie'], 'a.b.c', { dotted: true });
    await s.put(['用户', 'élodie'], 'with space/and:colon', { odd: 'key' });
  },
  when: async (s) => [
    await s.get(['用户', 'élodie'], 'préférences.thème'),
    await s.get(['用户', 'élodie'], 'a.b.c'),
    await s.get(['用户', 'élodie'], 'with space/and:colon'),
    await s.get(['用户', 'élodie'], 'a'),
  ],
  then: (r) => assert.deepEqual(r.ok.map((i) => i?.value ?? null),
    [{ couleur: 'vert 🌿' }, { dotted: true }, { odd: 'key' }, null]),
});

behaviour('an empty key', {
  when: async (s) => { await s.put(['crud'], '', { v: 1 }); return s.get(['crud'], ''); },
  differs: {
    why: 'a memtx attribute is non-empty text, so MemtxStore refuses the empty key; PostgresStore stores it',
    reference: (r) => assert.deepEqual(r.ok, { namespace: ['crud'], key: '', value: { v: 1 } }),
    memtx: (r) => assert.match(r.error, /Keys must be non-empty strings/),
    memory: false,
  },
});

// ---------------------------------------------------------------- batch

behaviour('batch runs puts and a get in order', {
  when: (s) => s.batch([
    { namespace: ['batch'], key: 'item1', value: { data: 'first' } },
    { namespace: ['batch'], key: 'item2', value: { data: 'second' } },
    { namespace: ['batch'], key: 'item1' },
  ]),
  then: (r) => assert.deepEqual(r.ok, [undefined, undefined,
    { namespace: ['batch'], key: 'item1', value: { data: 'first' } }]),
});

behaviour('batch mixing put, delete, get, search and listNamespaces', {
  given: (s) => s.put(['mix', 'a'], 'gone', { v: 0 }),
  when: (s) => s.batch([
    { namespace: ['mix', 'a'], key: 'k1', value: { v: 1 } },
    { namespace: ['mix', 'b'], key: 'k2', value: { v: 2 } },
    { namespace: ['mix', 'a'], key: 'gone', value: null },
    { namespace: ['mix', 'a'], key: 'gone' },
    { namespacePrefix: ['mix', 'a'], filter: { v: 1 }, limit: 10, offset: 0 },
    { matchConditions: [{ matchType: 'prefix', path: ['mix'] }], limit: 10, offset: 0 },
  ]),
  then: (r) => assert.deepEqual(r.ok, [undefined, undefined, undefined, null,
    [{ namespace: ['mix', 'a'], key: 'k1', value: { v: 1 } }], [['mix', 'a'], ['mix', 'b']]]),
});

behaviour('a batch with an invalid operation is refused', {
  when: (s) => s.batch([
    { namespace: ['batch'], key: 'item1', value: { data: 'first' } },
    { namespace: [], key: 'item2', value: { data: 'invalid' } },
    { namespace: ['batch'], key: 'item1' },
  ]),
  then: (r) => assert.match(r.error, /Namespace cannot be empty/),
});

behaviour('what a refused batch leaves behind', {
  when: async (s) => {
    await s.batch([
      { namespace: ['batch'], key: 'item1', value: { data: 'first' } },
      { namespace: [], key: 'item2', value: { data: 'invalid' } },
    ]).catch(() => {});
    return s.get(['batch'], 'item1');
  },
  differs: {
    why: 'MemtxStore checks every operation before running any, so a refused batch writes nothing; '
      + 'PostgresStore runs the operations before the invalid one',
    reference: (r) => assert.deepEqual(r.ok?.value, { data: 'first' }),
    memtx: (r) => assert.equal(r.ok, null),
    memory: false,
  },
});

// ---------------------------------------------------------------- search

async function docs(s) {
  await s.put(['docs'], 'doc1', {
    title: 'JavaScript Guide', content: 'Complete guide to JavaScript programming',
    category: 'programming', difficulty: 'beginner', tags: ['javascript', 'web', 'tutorial'], pages: 120,
    meta: { lang: 'en', level: 1 },
  });
  await s.put(['docs'], 'doc2', {
    title: 'TypeScript Handbook', content: 'Advanced TypeScript programming techniques',
    category: 'programming', difficulty: 'intermediate', tags: ['typescript', 'javascript', 'types'], pages: 300,
  });
  await s.put(['docs'], 'doc3', {
    title: 'Python Basics', content: 'Introduction to Python programming language',
    category: 'programming', difficulty: 'beginner', tags: ['python', 'basics'], pages: 80, draft: true,
    meta: { lang: 'fr', level: 1 },
  });
  await s.put(['recipes'], 'recipe1', {
    title: 'Chocolate Cake', content: 'Delicious chocolate cake recipe with detailed instructions',
    category: 'dessert', difficulty: 'easy', tags: ['chocolate', 'cake', 'baking'], pages: 2,
  });
}

behaviour('search without options lists the prefix, newest first', {
  given: docs,
  when: (s) => s.search(['docs']),
  then: (r) => assert.deepEqual(keysOf(r), ['doc3', 'doc2', 'doc1']),
});

behaviour('search sees an update as the newest', {
  given: async (s) => { await docs(s); await s.put(['docs'], 'doc1', { title: 'JavaScript Guide, 2nd ed.' }); },
  when: (s) => s.search(['docs']),
  then: (r) => assert.deepEqual(keysOf(r), ['doc1', 'doc3', 'doc2']),
});

for (const [what, filter, expected] of [
  ['a simple filter', { category: 'programming' }, ['doc1', 'doc2', 'doc3']],
  ['$eq', { difficulty: { $eq: 'beginner' } }, ['doc1', 'doc3']],
  ['several conditions', { category: 'programming', difficulty: { $ne: 'advanced' } }, ['doc1', 'doc2', 'doc3']],
  ['$ne', { difficulty: { $ne: 'beginner' } }, ['doc2']],
  ['$in', { difficulty: { $in: ['beginner', 'intermediate'] } }, ['doc1', 'doc2', 'doc3']],
  ['$nin', { difficulty: { $nin: ['beginner'] } }, ['doc2']],
  ['$gt and $lte on numbers', { pages: { $gt: 80, $lte: 300 } }, ['doc1', 'doc2']],
  ['$gte and $lt on numbers', { pages: { $gte: 80, $lt: 300 } }, ['doc1', 'doc3']],
  ['$exists', { draft: { $exists: true } }, ['doc3']],
  ['$exists false', { draft: { $exists: false } }, ['doc1', 'doc2']],
  ['a boolean', { draft: true }, ['doc3']],
  ['a number', { pages: 120 }, ['doc1']],
  ['a nested object', { meta: { lang: 'fr' } }, ['doc3']],
  ['an array, compared as text', { tags: ['python'] }, []],
  ['no match', { category: 'poetry' }, []],
]) {
  behaviour(`search with ${what}`, {
    given: docs,
    when: (s) => s.search(['docs'], { filter }),
    then: (r) => assert.deepEqual(sorted(keysOf(r)), expected),
  });
}

behaviour('search pages with limit and offset', {
  given: docs,
  when: async (s) => [await s.search(['docs'], { limit: 2, offset: 0 }), await s.search(['docs'], { limit: 2, offset: 2 }),
    await s.search(['docs'], { limit: 2, offset: 3 })],
  then: (r) => assert.deepEqual(r.ok.map((page) => page.map((i) => i.key)), [['doc3', 'doc2'], ['doc1'], []]),
});

behaviour('search of a namespace that does not exist is empty', {
  given: docs,
  when: (s) => s.search(['nonexistent']),
  then: (r) => assert.deepEqual(r.ok, []),
});

behaviour('search covers nested namespaces under the prefix', {
  given: async (s) => {
    await s.put(['org', 'team'], 'a', { n: 1 });
    await s.put(['org', 'team', 'sub'], 'b', { n: 2 });
    await s.put(['org'], 'c', { n: 3 });
  },
  when: (s) => s.search(['org', 'team']),
  then: (r) => assert.deepEqual(r.ok.map((i) => [i.namespace, i.key]), [[['org', 'team', 'sub'], 'b'], [['org', 'team'], 'a']]),
});

// a full-text query: both stores rank with ts_rank, over different
// documents, so the cases compare which items match
for (const [what, options, expected] of [
  ['a word', { query: 'JavaScript' }, ['doc1', 'doc2']],
  ['a word in one value', { query: 'Python' }, ['doc3']],
  ['a common word', { query: 'programming' }, ['doc1', 'doc2', 'doc3']],
  ['a filter', { query: 'guide', filter: { difficulty: 'beginner' } }, ['doc1']],
  ['no match', { query: 'chocolate' }, []],
]) {
  behaviour(`search with a query: ${what}`, {
    given: docs,
    when: async (s) => sorted((await s.search(['docs'], options)).map((i) => i.key)),
    then: (r) => assert.deepEqual(r.ok, expected),
  });
}

behaviour('a query ranks the better match first', {
  given: docs,
  when: async (s) => (await s.search(['docs'], { query: 'TypeScript' }))[0].key,
  then: (r) => assert.equal(r.ok, 'doc2'),
});

// ---------------------------------------------------------------- listNamespaces

async function tree(s) {
  for (const ns of [['docs', 'v1'], ['docs', 'v2'], ['cache', 'temp'], ['tenant', 'a'], ['tenant', 'a', 'notes'],
    ['tenant', 'ab'], ['tenant', 'a', 'alice'], ['users', 'alice'], ['users', 'malice'], ['alice']]) {
    await s.put(ns, ns.join('-'), { text: 'hello', enabled: true });
  }
}

behaviour('listNamespaces lists every namespace, in order', {
  given: tree,
  when: (s) => s.listNamespaces(),
  then: (r) => assert.deepEqual(r.ok, [['alice'], ['cache', 'temp'], ['docs', 'v1'], ['docs', 'v2'],
    ['tenant', 'a'], ['tenant', 'a', 'alice'], ['tenant', 'a', 'notes'], ['tenant', 'ab'],
    ['users', 'alice'], ['users', 'malice']]),
});

behaviour('listNamespaces with a prefix', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['docs'] }),
  then: (r) => assert.deepEqual(r.ok, [['docs', 'v1'], ['docs', 'v2']]),
});

behaviour('listNamespaces pages with limit and offset', {
  given: tree,
  when: async (s) => [await s.listNamespaces({ limit: 3 }), await s.listNamespaces({ limit: 3, offset: 8 })],
  then: (r) => assert.deepEqual(r.ok, [[['alice'], ['cache', 'temp'], ['docs', 'v1']], [['users', 'alice'], ['users', 'malice']]]),
});

behaviour('listNamespaces of a missing prefix is empty', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['missing'] }),
  then: (r) => assert.deepEqual(r.ok, []),
});

behaviour('a deleted item leaves no namespace behind', {
  given: async (s) => { await s.put(['only', 'one'], 'k', { v: 1 }); await s.delete(['only', 'one'], 'k'); },
  when: (s) => s.listNamespaces({ prefix: ['only'] }),
  then: (r) => assert.deepEqual(r.ok, []),
});

behaviour('listNamespaces: a prefix stops at whole labels', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['tenant', 'a'] }),
  differs: {
    why: 'PostgresStore 1.0.5 matches the joined path with LIKE, so ["tenant", "a"] also finds ["tenant", "ab"] '
      + '(fixed upstream after 1.0.5); MemtxStore matches whole labels',
    reference: (r) => assert.deepEqual(r.ok, [['tenant', 'a'], ['tenant', 'a', 'alice'], ['tenant', 'a', 'notes'], ['tenant', 'ab']]),
    memtx: (r) => assert.deepEqual(r.ok, [['tenant', 'a'], ['tenant', 'a', 'alice'], ['tenant', 'a', 'notes']]),
  },
});

behaviour('listNamespaces: a suffix matches whole labels', {
  given: tree,
  when: (s) => s.listNamespaces({ suffix: ['alice'] }),
  differs: {
    why: 'PostgresStore 1.0.5 matches "%alice", so ["users", "malice"] ends with ["alice"] there',
    reference: (r) => assert.deepEqual(r.ok, [['alice'], ['tenant', 'a', 'alice'], ['users', 'alice'], ['users', 'malice']]),
    memtx: (r) => assert.deepEqual(r.ok, [['alice'], ['tenant', 'a', 'alice'], ['users', 'alice']]),
  },
});

behaviour('listNamespaces: prefix and suffix together', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['tenant'], suffix: ['alice'] }),
  then: (r) => assert.deepEqual(r.ok, [['tenant', 'a', 'alice']]),
});

behaviour('listNamespaces: maxDepth under a prefix', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['tenant'], maxDepth: 2 }),
  then: (r) => assert.deepEqual(r.ok, [['tenant', 'a'], ['tenant', 'ab']]),
});

behaviour('listNamespaces: maxDepth above the deepest namespace keeps them all', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['docs'], maxDepth: 5 }),
  then: (r) => assert.deepEqual(r.ok, [['docs', 'v1'], ['docs', 'v2']]),
});

behaviour('listNamespaces: maxDepth 1', {
  given: tree,
  when: (s) => s.listNamespaces({ maxDepth: 1 }),
  differs: {
    why: 'as above: truncation (every root label once) against dropping (only the one-label namespace)',
    reference: (r) => assert.deepEqual(r.ok, [['alice']]),
    memtx: (r) => assert.deepEqual(r.ok, [['alice'], ['cache'], ['docs'], ['tenant'], ['users']]),
  },
});

behaviour('listNamespaces: "*" matches any one label', {
  given: tree,
  when: (s) => s.listNamespaces({ prefix: ['*', 'alice'] }),
  differs: {
    why: 'PostgresStore 1.0.5 takes "*" literally; InMemoryStore and MemtxStore as a wildcard label',
    reference: (r) => assert.deepEqual(r.ok, []),
    memtx: (r) => assert.deepEqual(r.ok, [['users', 'alice']]),
  },
});

// ---------------------------------------------------------------- labels and prefixes

behaviour('labels with "_", "%" and "\\"', {
  when: async (s) => {
    await s.put(['user_1', '100%', 'back\\slash'], 'k', { v: 1 });
    return s.search(['user_1']);
  },
  differs: {
    why: 'PostgresStore 1.0.5 refuses LIKE wildcards in labels (its matching is LIKE), so even "user_1"; '
      + 'MemtxStore does not match with LIKE and accepts them, as InMemoryStore does',
    reference: (r) => assert.match(r.error, /cannot contain SQL LIKE wildcards/),
    memtx: (r) => assert.deepEqual(r.ok, [{ namespace: ['user_1', '100%', 'back\\slash'], key: 'k', value: { v: 1 } }]),
  },
});

behaviour('search: a prefix stops at whole labels', {
  given: tree,
  when: async (s) => sorted((await s.search(['tenant', 'a'], { filter: { enabled: true } })).map((i) => i.namespace.join('/'))),
  differs: {
    why: 'as for listNamespaces: PostgresStore 1.0.5 finds the sibling ["tenant", "ab"] under ["tenant", "a"]',
    reference: (r) => assert.deepEqual(r.ok, ['tenant/a', 'tenant/a/alice', 'tenant/a/notes', 'tenant/ab']),
    memtx: (r) => assert.deepEqual(r.ok, ['tenant/a', 'tenant/a/alice', 'tenant/a/notes']),
  },
});

behaviour('search of the empty prefix', {
  given: docs,
  when: async (s) => sorted((await s.search([])).map((i) => i.key)),
  differs: {
    why: 'the store contract lets search([]) search everything (InMemoryStore does); PostgresStore 1.0.5 refuses it',
    reference: (r) => assert.match(r.error, /Namespace cannot be empty/),
    memtx: (r) => assert.deepEqual(r.ok, ['doc1', 'doc2', 'doc3', 'recipe1']),
  },
});

behaviour('a label with the ":" separator', {
  when: async (s) => { await s.put(['a:b'], 'k', { v: 1 }); return s.listNamespaces(); },
  differs: {
    why: 'PostgresStore 1.0.5 stores ["a:b"] and reads it back as ["a", "b"]; the store contract '
      + '(@langchain/langgraph-checkpoint 1.2) refuses ":" in labels, and so does MemtxStore',
    reference: (r) => assert.deepEqual(r.ok, [['a', 'b']]),
    memtx: (r) => assert.match(r.error, /cannot contain colons/),
  },
});

// ---------------------------------------------------------------- concurrent writers

/**
 * Runs put while another SQL session holds an uncommitted write of the same
 * item (begun by `hold`), waits until put blocks on it, commits the other
 * session, and returns put's outcome and the value that stays.
 */
async function racedPut(store, hold) {
  const other = await pool.connect();
  try {
    await other.query('BEGIN');
    await hold(other);
    const put = store.put(['race'], 'item', { by: 'store' }).then(() => 'committed', (err) => err);
    for (let i = 0; ; i += 1) {
      // asked outside the other session's transaction, which would keep one stats snapshot
      const { rows } = await admin.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [database]);
      if (rows[0].n > 0) break;
      assert.ok(i < 500, 'the put never waited for the other writer');
      await new Promise((resolve) => { setTimeout(resolve, 10); });
    }
    await other.query('COMMIT');
    const result = await put;
    return { result, stays: (await store.get(['race'], 'item')).value };
  } finally {
    other.release();
  }
}

/** A commit of the item by another memtx writer, in the held session `c`. */
const otherWriter = (memtx) => async (c) => {
  const tx = (await c.query('SELECT memtx.begin(namespace => $1) AS tx', [memtx.namespace])).rows[0].tx;
  await c.query(`SELECT memtx.stage($1, $2, 'item', '{"by": "other"}')`, [tx, encodeNamespace(['race'])]);
  await c.query('SELECT memtx.commit($1)', [tx]);
};

/** The race item's records in memtx, oldest first. @param {MemtxStore} memtx */
async function raceRecords(memtx) {
  const { rows } = await pool.query(`SELECT id::int, value->>'by' AS by, state::text, reason, expected_head::int
    FROM memtx.records WHERE namespace = $1 ORDER BY id`, [memtx.namespace]);
  return rows;
}

test('a put racing another writer: last writer wins in PostgresStore; MemtxStore retries on the new head, keeping the refusal', async () => {
  const { reference, memtx, stop } = await freshStores();
  try {
    await reference.put(['race'], 'item', { by: 'nobody' });
    const ref = await racedPut(reference, (c) => c.query(
      `UPDATE ${reference.core.schema}.store SET value = '{"by": "other"}' WHERE namespace_path = 'race' AND key = 'item'`));
    assert.deepEqual(ref, { result: 'committed', stays: { by: 'store' } });

    await memtx.put(['race'], 'item', { by: 'nobody' });
    const got = await racedPut(memtx, otherWriter(memtx));
    assert.deepEqual(got, { result: 'committed', stays: { by: 'store' } });
    // underneath: the first proposal lost the race and stays quarantined; the retry expected the other's record
    const [nobody, other, refused, retried] = await raceRecords(memtx);
    assert.deepEqual([nobody.by, nobody.state], ['nobody', 'superseded']);
    assert.deepEqual([other.by, other.state], ['other', 'superseded']);
    assert.deepEqual([refused.by, refused.state, refused.reason, refused.expected_head], ['store', 'quarantined', 'stale_late_write', null]);
    assert.deepEqual([retried.by, retried.state, retried.expected_head], ['store', 'committed', other.id]);
  } finally {
    await stop();
  }
});

test("onConflict: 'throw' refuses the stale put: the value that committed first stays", async () => {
  const { memtx: made, stop } = await freshStores();
  const memtx = new MemtxStore({ pool, namespace: made.namespace, onConflict: 'throw' });
  try {
    await memtx.put(['race'], 'item', { by: 'nobody' });
    const got = await racedPut(memtx, otherWriter(memtx));
    assert.ok(got.result instanceof PutRefused, `${got.result}`);
    assert.deepEqual([got.result.state, got.result.reason, got.result.attempts], ['quarantined', 'stale_late_write', 1]);
    assert.deepEqual(got.stays, { by: 'other' });
    // the refused put is on record, with its reason
    const { rows } = await pool.query('SELECT value, state, reason FROM memtx.records WHERE id = $1', [got.result.recordId]);
    assert.deepEqual(rows, [{ value: { by: 'store' }, state: 'quarantined', reason: 'stale_late_write' }]);
  } finally {
    await stop();
  }
  assert.throws(() => new MemtxStore({ pool, onConflict: 'overwrite' }), /onConflict must be one of retry, throw; got "overwrite"/);
});

test('the retry policy is bounded, and retries conflicts only', async () => {
  /** a pool whose proposals always lose: stale_head, or lower_authority */
  const losing = (reason) => {
    const seen = [];
    return { seen, query: async (statement) => {
      seen.push(statement.name);
      if (statement.name === 'memtx_store_propose') return { rows: [{ record_id: String(seen.length), state: 'quarantined', reason }] };
      return { rows: [{ head: 7 }] };
    } };
  };
  const stale = losing('stale_head');
  await assert.rejects(new MemtxStore({ pool: /** @type {any} */ (stale), maxRetries: 2 }).put(['a'], 'k', { v: 1 }),
    (err) => err instanceof PutRefused && err.attempts === 3 && err.reason === 'stale_head' && /after 3 attempts/.test(err.message));
  assert.deepEqual(stale.seen, ['memtx_store_propose', 'memtx_store_head', 'memtx_store_propose', 'memtx_store_head',
    'memtx_store_propose']);
  const lower = losing('lower_authority');
  await assert.rejects(new MemtxStore({ pool: /** @type {any} */ (lower) }).put(['a'], 'k', { v: 1 }),
    (err) => err instanceof PutRefused && err.attempts === 1 && err.reason === 'lower_authority');
  assert.deepEqual(lower.seen, ['memtx_store_propose']);
});

/** A pool that notes every statement its queries and clients run. */
function notingPool() {
  const statements = [];
  const note = (text, values) => { statements.push(typeof text === 'string' ? { text, values } : { ...text, values: text.values }); };
  return {
    statements,
    query: (text, values) => { note(text, values); return pool.query(text, values); },
    async connect() {
      const client = await pool.connect();
      return { query: (text, values) => { note(text, values); return client.query(text, values); }, release: () => client.release() };
    },
  };
}

/**
 * What a pool's connections send, counted on the wire: round trips (a
 * simple-protocol Query, or an extended-protocol Sync) and Parse messages
 * (a statement planned anew; a prepared statement sends none once parsed).
 * @param {pg.Pool} counted a pool none of whose connections exists yet
 */
function wireCounts(counted) {
  const counts = { roundTrips: 0, parses: 0 };
  counted.on('connect', (client) => {
    const wire = /** @type {any} */ (client).connection;
    for (const [method, field] of [['query', 'roundTrips'], ['sync', 'roundTrips'], ['parse', 'parses']]) {
      const send = wire[method].bind(wire);
      wire[method] = (...args) => { counts[field] += 1; return send(...args); };
    }
  });
  return counts;
}

test('a put is one round trip (a prepared memtx.propose), a get one (a prepared memtx.lookup), a search one', async () => {
  const single = new pg.Pool({ database, max: 1 });
  const wire = wireCounts(single);
  const noting = notingPool();
  const store = new MemtxStore({ pool: single, namespace: 'langgraph_statements' });
  const named = new MemtxStore({ pool: /** @type {any} */ (noting), namespace: 'langgraph_statements' });
  try {
    // the first of each prepares its statement on the connection
    await store.put(['users', 'alice'], 'prefs', { theme: 'dark' });
    await store.get(['users', 'alice'], 'prefs');
    await store.search(['users'], { query: 'dark' });
    const calls = [
      ['put of a new value', () => store.put(['users', 'alice'], 'prefs', { theme: 'light' }), 0],
      ['put of a new item', () => store.put(['users', 'bob'], 'prefs', { theme: 'dark' }), 0],
      ['get', async () => assert.equal((await store.get(['users', 'alice'], 'prefs')).value.theme, 'light'), 0],
      ['search with a query', async () => assert.deepEqual((await store.search(['users'], { query: 'light' })).map((i) => i.key), ['prefs']), 0],
      // a filter's SQL varies with the filter: parsed each time
      ['search with a query and a filter', async () => assert.deepEqual(
        (await store.search(['users'], { query: 'light', filter: { theme: 'light' } })).map((i) => i.key), ['prefs']), 1],
    ];
    for (const [what, call, parses] of calls) {
      Object.assign(wire, { roundTrips: 0, parses: 0 });
      await call();
      assert.deepEqual(wire, { roundTrips: 1, parses }, what);
    }
    const { rows } = await single.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'memtx_store_%' ORDER BY name");
    assert.deepEqual(rows.map((r) => r.name), ['memtx_store_get', 'memtx_store_propose', 'memtx_store_search']);
    // which statements they are
    await named.put(['users', 'alice'], 'prefs', { theme: 'dark' });
    await named.get(['users', 'alice'], 'prefs');
    assert.deepEqual(noting.statements.map((st) => st.name), ['memtx_store_propose', 'memtx_store_get']);
    assert.match(noting.statements[0].text, /FROM memtx\.propose\(/);
    assert.match(noting.statements[1].text, /FROM memtx\.lookup\(/);
  } finally {
    await single.end();
  }
});

test('a search with a query writes nothing and finds what get finds, whatever the role\'s tier', async () => {
  const store = new MemtxStore({ pool, namespace: 'langgraph_search_reads' });
  await store.put(['docs'], 'a', { text: 'postgres rocks' });
  await store.put(['docs'], 'b', { text: 'postgres rolls' });
  const transactions = async () => (await pool.query(
    "SELECT count(*)::int AS n FROM memtx.transactions WHERE namespace = 'langgraph_search_reads'")).rows[0].n;
  const before = await transactions();
  // a rival of item a staged by another writer and left in flight
  const tx = (await pool.query("SELECT memtx.begin(namespace => 'langgraph_search_reads') AS tx")).rows[0].tx;
  await pool.query(`SELECT memtx.stage($1, $2, 'a', '{"text": "pending"}')`, [tx, encodeNamespace(['docs'])]);
  // a role of tier high reads at causally_stable_read, where a record with a rival in flight is not shown
  const high = new pg.Pool({ database, max: 1, options: '-c memtx.default_tier=high' });
  try {
    const reader = new MemtxStore({ pool: high, namespace: 'langgraph_search_reads' });
    assert.equal((await reader.get(['docs'], 'a')).value.text, 'postgres rocks');
    assert.deepEqual(sorted((await reader.search(['docs'], { query: 'postgres' })).map((i) => i.key)), ['a', 'b']);
    assert.deepEqual(sorted((await reader.search(['docs'], { query: 'rocks', filter: { text: 'postgres rocks' } }))
      .map((i) => i.key)), ['a']);
    assert.deepEqual(await reader.search(['docs'], { query: 'nothing matches' }), []);
    assert.deepEqual(await reader.search(['docs'], { query: 'the' }), [], 'a stop word only');
    // no memtx transaction, and no transaction id: nothing written
    assert.equal(await transactions(), before + 1);
    const client = await high.connect();
    try {
      const noting = notingPool();
      await new MemtxStore({ pool: /** @type {any} */ (noting), namespace: 'langgraph_search_reads' })
        .search(['docs'], { query: 'postgres' });
      await client.query('BEGIN');
      const { rows } = await client.query(noting.statements[0].text, noting.statements[0].values);
      assert.deepEqual(rows.map((r) => r.entity + r.attribute).sort(), ['docs:a', 'docs:b']);
      assert.equal((await client.query('SELECT pg_current_xact_id_if_assigned() AS xid')).rows[0].xid, null);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  } finally {
    await high.end();
    await pool.query('SELECT memtx.abort($1)', [tx]);
  }
});

test('a batch is all or nothing: a refused put rolls it back and says which operation it was', async () => {
  await admin.query("SELECT memtx.register_source('langgraph_crm', 0.95)");
  const crm = new MemtxStore({ pool, namespace: 'langgraph_batch', source: 'langgraph_crm' });
  const store = new MemtxStore({ pool, namespace: 'langgraph_batch' });
  await crm.put(['users', 'alice'], 'email', { address: 'alice@example.com' });
  const count = async () => (await pool.query("SELECT count(*)::int AS n FROM memtx.records WHERE namespace = 'langgraph_batch'")).rows[0].n;
  const before = await count();
  await assert.rejects(store.batch([
    { namespace: ['users', 'bob'], key: 'email', value: { address: 'bob@example.com' } },
    { namespace: ['users', 'alice'], key: 'email', value: { address: 'alice@old.example' } },
    { namespace: ['users', 'carol'], key: 'email', value: { address: 'carol@example.com' } },
  ]), (err) => err instanceof PutRefused && err.index === 1 && err.reason === 'lower_authority'
    && /^operation 1 of the batch: put of "email" in \["users","alice"\]/.test(err.message)
    && /nothing of the batch was written$/.test(err.message));
  assert.equal(await count(), before, 'the batch wrote nothing, its refused record included');
  assert.equal(await store.get(['users', 'bob'], 'email'), null);
  // alone, a refused put stays in memtx for the audit
  await assert.rejects(store.put(['users', 'alice'], 'email', { address: 'alice@old.example' }), PutRefused);
  assert.equal(await count(), before + 1);
  // a batch that succeeds commits every operation at once
  assert.deepEqual(await store.batch([
    { namespace: ['users', 'bob'], key: 'email', value: { address: 'bob@example.com' } },
    { namespace: ['users', 'bob'], key: 'email' },
  ]), [undefined, { namespace: ['users', 'bob'], key: 'email', value: { address: 'bob@example.com' },
    createdAt: (await store.get(['users', 'bob'], 'email')).createdAt, updatedAt: (await store.get(['users', 'bob'], 'email')).updatedAt }]);
});

test('search modes: text and auto are served; vector and hybrid are refused as PostgresStore refuses them, an unknown mode too', async () => {
  const { reference, memtx, stop } = await freshStores();
  try {
    for (const store of [reference, memtx]) await docs(store);
    for (const mode of ['text', 'auto', undefined]) {
      assert.deepEqual(sorted((await memtx.search(['docs'], { query: 'Python', mode })).map((i) => i.key)), ['doc3'], `${mode}`);
    }
    for (const [mode, message] of [['vector', /^Vector search requested but not configured\./],
      ['hybrid', /^Hybrid search requested but vector search not configured\./], ['semantic', /^Unknown search mode: semantic$/]]) {
      for (const store of [reference, memtx]) {
        await assert.rejects(store.search(['docs'], { query: 'Python', mode }), (err) => message.test(err.message),
          `${store.constructor.name} ${mode}`);
      }
    }
    // without a query the mode is not looked at, in either store
    for (const store of [reference, memtx]) assert.equal((await store.search(['docs'], { mode: 'vector' })).length, 3);
  } finally {
    await stop();
  }
});

test('ttl: an item expires from every read as in PostgresStore, while its record stays in memtx', async () => {
  const { reference, memtx, stop } = await freshStores();
  try {
    const seen = async (store) => [
      (await store.get(['cache'], 'short'))?.value ?? null, (await store.get(['cache'], 'long'))?.value ?? null,
      (await store.search(['cache'])).map((i) => i.key).sort(),
      (await store.search(['cache'], { query: 'token' })).map((i) => i.key).sort(),
      await store.listNamespaces({ prefix: ['cache'] })];
    for (const store of [reference, memtx]) {
      await store.put(['cache'], 'short', { token: 'token a' }, undefined, { ttl: 0.02 }); // 1.2 s
      await store.put(['cache'], 'long', { token: 'token b' }, undefined, { ttl: 60 });
    }
    const fresh = [{ token: 'token a' }, { token: 'token b' }, ['long', 'short'], ['long', 'short'], [['cache']]];
    assert.deepEqual(await seen(reference), fresh);
    assert.deepEqual(await seen(memtx), fresh);
    await new Promise((resolve) => { setTimeout(resolve, 1500); });
    const later = [null, { token: 'token b' }, ['long'], ['long'], [['cache']]];
    assert.deepEqual(await seen(reference), later);
    assert.deepEqual(await seen(memtx), later);
    const { rows } = await pool.query(`SELECT attribute, state::text, extract(epoch FROM upper(valid) - lower(valid))::float8 AS lives
      FROM memtx.records WHERE namespace = $1 ORDER BY id`, [memtx.namespace]);
    assert.deepEqual(rows, [{ attribute: 'short', state: 'committed', lives: 1.2 },
      { attribute: 'long', state: 'committed', lives: 3600 }], 'expiry is not retraction');
    // put again after expiry: a new item (createdAt anew), no rival to supersede
    await memtx.put(['cache'], 'short', { token: 'token c' });
    const again = await memtx.get(['cache'], 'short');
    assert.equal(again.createdAt.getTime(), again.updatedAt.getTime());
  } finally {
    await stop();
  }
});

test("ttl: the store's defaultTtl applies to puts without their own; refreshOnRead and bad values are refused", async () => {
  const store = new MemtxStore({ pool, namespace: 'langgraph_ttl_default', ttl: { defaultTtl: 30, sweepIntervalMinutes: 5 } });
  await store.put(['a'], 'k', { v: 1 });
  await store.put(['a'], 'forever', { v: 2 }, undefined, { ttl: 60 * 24 });
  const { rows } = await pool.query(`SELECT attribute, extract(epoch FROM upper(valid) - lower(valid))::int AS seconds
    FROM memtx.records WHERE namespace = 'langgraph_ttl_default' ORDER BY id`);
  assert.deepEqual(rows, [{ attribute: 'k', seconds: 1800 }, { attribute: 'forever', seconds: 86400 }]);
  assert.throws(() => new MemtxStore({ pool, ttl: { defaultTtl: 5, refreshOnRead: true } }), /refreshOnRead is not supported/);
  assert.throws(() => new MemtxStore({ pool, ttl: { defaultTtl: -1 } }), /ttl.defaultTtl must be a positive number of minutes; got -1/);
  await assert.rejects(store.put(['a'], 'k', { v: 1 }, undefined, { ttl: 'soon' }), /ttl must be a positive number of minutes; got "soon"/);
  await assert.rejects(store.search(['a'], { refreshTtl: true }), /refreshTtl is not supported/);
});

// ---------------------------------------------------------------- memtx's side

test('each put is a belief commit, an update supersedes, a delete revokes', async () => {
  const store = new MemtxStore({ pool, namespace: 'langgraph_audit' });
  await store.put(['users', 'alice'], 'prefs', { theme: 'dark' });
  await store.put(['users', 'alice'], 'prefs', { theme: 'light' });
  await store.delete(['users', 'alice'], 'prefs');
  const { rows } = await pool.query(
    `SELECT r.entity, r.attribute, r.value, r.state, t.status,
            (SELECT array_agg(l.note) FROM memtx.rollback_log l WHERE l.record_id = r.id) AS notes
       FROM memtx.records r JOIN memtx.transactions t ON t.id = r.tx_id
      WHERE r.namespace = 'langgraph_audit' ORDER BY r.id`);
  assert.deepEqual(rows, [
    { entity: 'users:alice:', attribute: 'prefs', value: { theme: 'dark' }, state: 'superseded', status: 'committed', notes: null },
    { entity: 'users:alice:', attribute: 'prefs', value: { theme: 'light' }, state: 'revoked', status: 'committed',
      notes: ['deleted through the LangGraph store'] },
  ]);
  assert.deepEqual((await pool.query('SELECT * FROM memtx.check_invariants()')).rows, []);
});

test('namespace encoding: labels escape the separator and the escape, prefixes stay whole-label', () => {
  for (const ns of [['a'], ['a', 'b'], ['a:b', 'c'], ['a\\', 'b'], ['\\:', ':\\'], ['ü', '用户']]) {
    assert.deepEqual(decodeNamespace(encodeNamespace(ns)), ns);
  }
  assert.equal(encodeNamespace(['users', 'alice']), 'users:alice:');
  assert.equal(encodeNamespace(['a:b']), 'a\\:b:');
  assert.ok(!encodeNamespace(['tenant', 'ab']).startsWith(encodeNamespace(['tenant', 'a'])));
  assert.ok(encodeNamespace(['a\\', 'b']) !== encodeNamespace(['a\\:b']));
});

test('a store refuses an unknown filter operator', async () => {
  const store = new MemtxStore({ pool, namespace: 'langgraph_filter' });
  await assert.rejects(store.search(['docs'], { filter: { n: { $regex: 'x' } } }), /unknown filter operator \$regex/);
});

test('roles: a store writes as its role; sharing is the records\' readers and writers', async () => {
  await admin.query("SELECT memtx.grant_namespace('team_notes', r) FROM unnest($1::text[]) r", [AGENTS]);
  const stores = [];
  const as = (role, options = {}) => {
    const store = new MemtxStore({ connectionOptions: { database, user: role, password: db.password }, namespace: 'team_notes', ...options });
    stores.push(store);
    return store;
  };
  const [a, b] = AGENTS;
  try {
    const alice = as(a);
    const bob = as(b);
    await alice.put(['notes'], 'private', { text: 'mine' });
    assert.equal(await bob.get(['notes'], 'private'), null);
    assert.deepEqual(await bob.search(['notes']), []);
    assert.deepEqual(await bob.listNamespaces(), []);
    // a private item of another role is not bob's to overwrite
    await assert.rejects(bob.put(['notes'], 'private', { text: 'bob was here' }),
      (err) => err instanceof PutRefused && err.reason === 'write_not_permitted');
    assert.deepEqual((await alice.get(['notes'], 'private')).value, { text: 'mine' });

    const aliceShares = as(a, { scope: 'shared', readers: [b], writers: [b] });
    const bobShares = as(b, { scope: 'shared', readers: [a], writers: [a] });
    await aliceShares.put(['notes'], 'shared', { text: 'ours' });
    assert.deepEqual((await bob.get(['notes'], 'shared')).value, { text: 'ours' });
    await bobShares.put(['notes'], 'shared', { text: 'ours, edited' });
    assert.deepEqual((await alice.get(['notes'], 'shared')).value, { text: 'ours, edited' });
    assert.deepEqual((await bob.search(['notes'])).map((i) => i.key), ['shared']);
    // a delete revokes, which only the record's owner (or a harness) may
    await assert.rejects(alice.delete(['notes'], 'shared'), (err) => err.sqlstate === '42501');
    await bobShares.delete(['notes'], 'shared');
    assert.equal(await alice.get(['notes'], 'shared'), null);
  } finally {
    for (const store of stores) await store.stop();
  }
});

test('an agent\'s get, search and listing read the items they answer with, not the namespace nor an item\'s history', async () => {
  // as an agent role, under row-level security (a superuser's plan is not an agent's): 3000 items
  // under other prefixes, and one item updated 300 times
  await admin.query("SELECT memtx.grant_namespace('langgraph_history', $1)", [AGENTS[0]]);
  const agent = new pg.Pool({ database, user: AGENTS[0], password: db.password, max: 1 });
  const store = new MemtxStore({ pool: agent, namespace: 'langgraph_history' });
  try {
    const tx = (await admin.query("SELECT memtx.begin(namespace => 'langgraph_history') AS tx")).rows[0].tx;
    await admin.query(`SELECT memtx.stage_many($1, (SELECT jsonb_agg(jsonb_build_object('entity', $2 || (i % 50) || ':',
      'attribute', 'k' || i, 'value', jsonb_build_object('text', 'filler ' || i), 'scope', 'public'))
      FROM generate_series(1, 3000) i))`, [tx, encodeNamespace(['others']).concat('o')]);
    await admin.query('SELECT memtx.commit($1)', [tx]);
    await store.put(['docs'], 'plan', { text: 'walnut plan 0' });
    await store.put(['docs'], 'other', { text: 'another walnut' });
    const first = (await store.get(['docs'], 'plan')).createdAt;
    for (let i = 1; i <= 300; i += 1) await store.put(['docs'], 'plan', { text: `walnut plan ${i}` });
    await admin.query('ANALYZE memtx.records');
    // rows of memtx.records read by a call: sequential tuples read + tuples fetched through
    // indexes, the agent's connection made to flush its statistics before and after
    const stats = "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS n FROM pg_stat_user_tables WHERE schemaname = 'memtx' AND relname = 'records'";
    const read = async (call) => {
      await agent.query('SELECT pg_stat_force_next_flush()');
      const before = Number((await admin.query(stats)).rows[0].n);
      const result = await call();
      await agent.query('SELECT pg_stat_force_next_flush()');
      return [result, Number((await admin.query(stats)).rows[0].n) - before];
    };
    const [item, byGet] = await read(() => store.get(['docs'], 'plan'));
    assert.equal(item.value.text, 'walnut plan 300');
    assert.deepEqual(item.createdAt, first, 'createdAt is the first put\'s');
    assert.ok(byGet <= 10, `get read ${byGet} rows`);
    const [found, bySearch] = await read(() => store.search(['docs'], { query: 'walnut' }));
    assert.deepEqual(sorted(found.map((i) => i.key)), ['other', 'plan']);
    assert.ok(bySearch <= 20, `search read ${bySearch} rows`);
    const [listed, byList] = await read(() => store.search(['docs']));
    assert.deepEqual(sorted(listed.map((i) => i.key)), ['other', 'plan']);
    // a listing reads the records under its prefix, the item's history included, not the 3000 others
    assert.ok(byList <= 320, `listing read ${byList} rows`);
  } finally {
    await agent.end();
  }
});

test('the store\'s reads use the indexes of memtx.records, never a scan of it', async () => {
  // 2000 records in another namespace: a scan would read them all
  const tx = (await admin.query("SELECT memtx.begin(namespace => 'bulk') AS tx")).rows[0].tx;
  await admin.query("SELECT memtx.stage($1, 'e' || i || ':', 'k', to_jsonb(i)) FROM generate_series(1, 2000) i", [tx]);
  await admin.query('SELECT memtx.commit($1)', [tx]);
  await admin.query('ANALYZE memtx.records');
  const noting = notingPool();
  const store = new MemtxStore({ pool: /** @type {any} */ (noting), namespace: 'langgraph_plans' });
  await docs(store);
  await store.get(['docs'], 'doc1');
  await store.search(['docs'], { filter: { difficulty: 'beginner' } });
  await store.search(['docs'], { query: 'programming', filter: { difficulty: 'beginner' } });
  await store.listNamespaces({ prefix: ['docs'] });
  await store.delete(['docs'], 'doc2');
  const statements = noting.statements.map((st) => [st.text, st.values]);
  const reads = statements.filter(([text]) => /memtx\.(records|lookup|recall)/.test(text));
  assert.ok(reads.length >= 5);
  for (const [text, values] of reads) {
    const plan = (await pool.query(`EXPLAIN ${text}`, values)).rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.doesNotMatch(plan, /Seq Scan on records/, `${text}\n${plan}`);
  }
});
