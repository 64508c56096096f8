// Differential test: one scripted trace of the nine knowledge-graph tools
// against the reference memory server (@modelcontextprotocol/server-memory,
// a JSONL file) and against memtx-mcp, on a database without and on one with
// the optional indexed search; every step must answer the same (content,
// structuredContent, isError), and both list the same tools.
//
// The reference's order is deterministic (file order = creation order), so
// nothing is normalised except where a step says so: an argument error is
// compared by isError only (the reference words it through zod, memtx-mcp
// through Ajv).  The deliberate differences (a fact repeated within one call
// is stored once) are asserted as such at the end, and what memtx records
// underneath (belief commits, revokes with their cascade) is checked too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { call, graphStores } from './kg-servers.js';

const AGENT = 'memtx_node_kg_diff_agent';
let stores;
/** @type {import('@modelcontextprotocol/sdk/client/index.js').Client} */
let ref;
/** @type {import('@modelcontextprotocol/sdk/client/index.js').Client} */
let ours;

before(async () => {
  stores = await graphStores('memtx_node_kg_diff', AGENT);
  ref = await stores.reference();
  ours = await stores.memtx();
});
after(async () => {
  await ref?.close();
  await ours?.close();
  await stores?.drop();
});

const alice = { name: 'alice', entityType: 'person', observations: ['likes tea', 'works at Acme'] };
const bob = { name: 'bob', entityType: 'person', observations: [] };
const acme = { name: 'acme', entityType: 'company', observations: ['founded 1999'] };
const carol = { name: 'carol', entityType: 'person', observations: ['likes green tea'] };
const rel = (from, relationType, to) => ({ from, to, relationType });

/** The trace: [tool, arguments], in order; each step's answers must agree. */
const TRACE = [
  ['read_graph', {}],
  ['create_entities', { entities: [alice, bob, acme] }],
  ['create_entities', { entities: [{ ...alice, entityType: 'robot' }, carol] }], // alice exists: only carol
  ['create_relations', { relations: [rel('alice', 'works_at', 'acme'), rel('bob', 'knows', 'alice'),
    rel('alice', 'knows', 'bob'), rel('dave', 'knows', 'alice')] }], // dave has no entity: allowed
  ['create_relations', { relations: [rel('alice', 'works_at', 'acme'), rel('carol', 'knows', 'bob')] }],
  ['add_observations', { observations: [{ entityName: 'alice', contents: ['likes tea', 'plays chess'] },
    { entityName: 'bob', contents: ['new here'] }, { entityName: 'alice', contents: ['plays chess', 'owns a cat'] }] }],
  ['add_observations', { observations: [{ entityName: 'alice', contents: ['never stored'] },
    { entityName: 'zed', contents: ['nobody'] }] }], // error, and nothing of the call is stored
  ['read_graph', {}],
  ['search_nodes', { query: 'tea' }],
  ['search_nodes', { query: 'ACME' }],
  ['search_nodes', { query: 'no such thing' }],
  ['open_nodes', { names: ['bob', 'nobody'] }],
  ['open_nodes', { names: [] }],
  ['delete_observations', { deletions: [{ entityName: 'alice', observations: ['works at Acme', 'not there'] },
    { entityName: 'nobody', observations: ['x'] }] }],
  ['delete_relations', { relations: [rel('bob', 'knows', 'alice'), rel('x', 'y', 'z')] }],
  ['delete_entities', { entityNames: ['acme', 'nobody'] }],
  ['read_graph', {}],
  ['create_entities', { entities: [{ ...acme, observations: ['refounded 2026'] }] }], // back, at the end
  ['add_observations', { observations: [{ entityName: 'acme', contents: ['founded 1999'] }] }],
  ['create_relations', { relations: [rel('alice', 'works_at', 'acme')] }],
  ['delete_entities', { entityNames: ['alice'] }], // takes dave -> alice along, though dave has no entity
  ['read_graph', {}],
  ['open_nodes', { names: ['alice', 'acme', 'carol'] }],
  ['search_nodes', { query: 'PERSON' }],
  ['delete_entities', { entityNames: ['alice'] }], // again: nothing left to delete, same answer
  ['delete_observations', { deletions: [{ entityName: 'carol', observations: ['likes green tea'] }] }],
  ['add_observations', { observations: [{ entityName: 'carol', contents: ['likes green tea'] }] }], // re-added: last
  ['read_graph', {}],
];

/**
 * Every step of the trace answers the same from both servers.
 * @param {import('@modelcontextprotocol/sdk/client/index.js').Client} reference
 * @param {import('@modelcontextprotocol/sdk/client/index.js').Client} memtx
 */
async function sameTrace(reference, memtx) {
  for (const [i, [tool, args]] of TRACE.entries()) {
    const expected = await call(reference, tool, args);
    const actual = await call(memtx, tool, args);
    assert.deepEqual(actual, expected, `step ${i}: ${tool} ${JSON.stringify(args)}`);
  }
  // the trace exercised what it means to: a final graph with content, an error step
  const last = await call(memtx, 'read_graph', {});
  assert.deepEqual(last.structuredContent.entities.map((e) => e.name), ['bob', 'carol', 'acme']);
  assert.equal((await call(memtx, 'add_observations', TRACE[6][1])).isError, true);
}

describe('the reference memory server and memtx-mcp', () => {
  test('list the nine tools with the same definitions', async () => {
    const refTools = (await ref.listTools()).tools;
    const ourTools = (await ours.listTools()).tools;
    assert.equal(refTools.length, 9);
    for (const tool of refTools) {
      assert.deepEqual(ourTools.find((t) => t.name === tool.name), tool, tool.name);
    }
  });

  test('answer every step of the trace the same', () => sameTrace(ref, ours));

  test('refuse arguments that do not fit the schema (compared by isError only)', async () => {
    for (const [tool, args] of [['create_entities', { entities: [{ name: 'x', entityType: 'y' }] }],
      ['open_nodes', { names: 'alice' }], ['search_nodes', {}]]) {
      const expected = await call(ref, tool, args);
      const actual = await call(ours, tool, args);
      assert.equal(expected.isError, true, tool);
      assert.equal(actual.isError, true, tool);
      assert.equal(actual.structuredContent, undefined);
    }
  });

  test('serve the memory://knowledge-graph resource alike, and notify its subscribers of writes', async () => {
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    for (const client of [ref, ours]) assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
    assert.deepEqual((await ours.listResources()).resources, (await ref.listResources()).resources);
    assert.deepEqual(await ours.listResourceTemplates(), await ref.listResourceTemplates());
    const uri = 'memory://knowledge-graph';
    const [expected, actual] = [await ref.readResource({ uri }), await ours.readResource({ uri })];
    assert.deepEqual(actual, expected);
    assert.deepEqual(JSON.parse(actual.contents[0].text), (await call(ours, 'read_graph', {})).structuredContent);
    const heard = { ref: [], ours: [] };
    ref.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { heard.ref.push(n.params.uri); });
    ours.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { heard.ours.push(n.params.uri); });
    const write = ['add_observations', { observations: [{ entityName: 'carol', contents: ['subscribed'] }] }];
    const read = ['read_graph', {}];
    const steps = async () => {
      for (const client of [ref, ours]) {
        await call(client, ...read);
        await call(client, ...write);          // not subscribed yet: no notification
        await client.subscribeResource({ uri });
        await call(client, ...read);           // a read: none
        await call(client, ...write);          // one
        await call(client, 'add_observations', { observations: [{ entityName: 'nobody', contents: ['x'] }] }); // an error: none
        await client.unsubscribeResource({ uri });
        await call(client, ...write);          // none
      }
    };
    await steps();
    await new Promise((resolve) => { setTimeout(resolve, 200); });
    assert.deepEqual(heard, { ref: [uri], ours: [uri] });
    await assert.rejects(ours.readResource({ uri: 'memory://other' }), /Resource memory:\/\/other not found/);
  });

  test('store a fact repeated within one call once (a deliberate difference)', async () => {
    const twice = { entities: [{ name: 'dup', entityType: 't', observations: ['o', 'o'] },
      { name: 'dup', entityType: 't', observations: [] }] };
    const refMade = (await call(ref, 'create_entities', twice)).structuredContent.entities;
    const ourMade = (await call(ours, 'create_entities', twice)).structuredContent.entities;
    assert.equal(refMade.length, 2);
    assert.deepEqual(ourMade, [{ name: 'dup', entityType: 't', observations: ['o'] }]);
    const open = { names: ['dup'] };
    assert.equal((await call(ref, 'open_nodes', open)).structuredContent.entities.length, 2);
    assert.deepEqual((await call(ours, 'open_nodes', open)).structuredContent.entities, ourMade);
  });
});

describe('the reference memory server and memtx-mcp with the optional indexed search', () => {
  let indexed;
  /** @type {import('@modelcontextprotocol/sdk/client/index.js').Client[]} */
  let clients = [];
  before(async () => {
    indexed = await graphStores('memtx_node_kg_diff_indexed', `${AGENT}_indexed`, 'graph', { search: true });
    clients = [await indexed.reference(), await indexed.memtx()];
  });
  after(async () => {
    for (const client of clients) await client.close();
    await indexed?.drop();
  });

  test('answer every step of the trace the same', () => sameTrace(clients[0], clients[1]));

  test('search through memtx_kg.node_records (a search it may not run fails)', async () => {
    await indexed.harness.query('REVOKE EXECUTE ON FUNCTION memtx_kg.node_records(text, text, text[], text) FROM PUBLIC');
    try {
      const refused = await call(clients[1], 'search_nodes', { query: 'tea' });
      assert.equal(refused.isError, true);
      assert.match(refused.content[0].text, /permission denied for function node_records/);
    } finally {
      await indexed.harness.query('GRANT EXECUTE ON FUNCTION memtx_kg.node_records(text, text, text[], text) TO PUBLIC');
    }
    assert.deepEqual((await call(clients[1], 'search_nodes', { query: 'tea' })).structuredContent.entities.map((e) => e.name),
      ['carol']);
  });
});

describe('memtx underneath', () => {
  /** @param {string} sql @param {unknown[]} [values] */
  const rows = async (sql, values = []) => (await stores.harness.query(sql, values)).rows;

  test('each write tool call is one belief commit; reads write nothing', async () => {
    const count = async () => (await rows(`SELECT (SELECT count(*)::int FROM memtx.transactions WHERE agent = $1) AS transactions,
      (SELECT count(*)::int FROM memtx.read_set) AS reads`, [AGENT]))[0];
    const before = await count();
    await call(ours, 'create_entities', { entities: [{ name: 'eve', entityType: 'person', observations: ['a', 'b'] }] });
    const written = await count();
    for (const [tool, args] of [['read_graph', {}], ['search_nodes', { query: 'eve' }], ['open_nodes', { names: ['eve'] }]]) {
      assert.equal((await call(ours, tool, args)).structuredContent.entities.length > 0, true, tool);
    }
    assert.deepEqual(await count(), written, 'the reads began no transaction and read into no read set');
    const txs = await rows(`SELECT t.status, count(r.id)::int AS records,
        count(r.id) FILTER (WHERE r.kind = 'belief' AND r.state = 'committed')::int AS beliefs
      FROM memtx.transactions t LEFT JOIN memtx.records r ON r.tx_id = t.id
      WHERE t.agent = $1 GROUP BY t.id, t.status ORDER BY t.id OFFSET $2`, [AGENT, before.transactions]);
    assert.deepEqual(txs, [{ status: 'committed', records: 3, beliefs: 3 }]);
    const slots = await rows(`SELECT entity, attribute, value FROM memtx.records
      WHERE entity = 'kg:eve' ORDER BY id`);
    assert.deepEqual(slots.map((s) => [s.entity, s.attribute.replace(/[0-9a-f]{64}$/, '#'), s.value]),
      [['kg:eve', 'entityType', 'person'], ['kg:eve', 'observation:#', 'a'], ['kg:eve', 'observation:#', 'b']]);
  });

  test('a call memtx refuses midway stores nothing of it and answers the error as text', async () => {
    const transactions = async () => (await rows('SELECT count(*)::int AS n FROM memtx.transactions WHERE agent = $1', [AGENT]))[0].n;
    const before = await transactions();
    const long = 'x'.repeat(2000);
    const r = await call(ours, 'create_entities', { entities: [
      { name: 'grace', entityType: 'person', observations: ['first of the call'] },
      { name: long, entityType: 'person', observations: [] }] });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent, undefined);
    assert.match(r.content[0].text, /entity is too long/);
    assert.deepEqual((await call(ours, 'open_nodes', { names: ['grace', long] })).structuredContent,
      { entities: [], relations: [] });
    // the call was one SQL transaction: not a record of it, not its memtx transaction
    assert.deepEqual(await rows(`SELECT state, reason FROM memtx.records WHERE entity = 'kg:grace' ORDER BY id`), []);
    assert.equal(await transactions(), before);
    // an add to a missing entity: its memtx transaction aborted, nothing staged
    const missing = await call(ours, 'add_observations', { observations: [{ entityName: 'eve', contents: ['not kept'] },
      { entityName: 'nobody here', contents: ['x'] }] });
    assert.deepEqual(missing, { content: [{ type: 'text', text: 'Entity with name nobody here not found' }],
      structuredContent: undefined, isError: true });
    assert.deepEqual(await rows(`SELECT t.status::text, count(r.id)::int AS staged FROM memtx.transactions t
      LEFT JOIN memtx.records r ON r.tx_id = t.id WHERE t.agent = $1 GROUP BY t.id, t.status ORDER BY t.id DESC LIMIT 1`, [AGENT]),
    [{ status: 'aborted', staged: 0 }]);
  });

  test('delete_entities revokes the entity and its cascade takes its observations and relations', async () => {
    await call(ours, 'create_entities', { entities: [{ name: 'frank', entityType: 'person', observations: ['tall'] }] });
    await call(ours, 'create_relations', { relations: [rel('eve', 'knows', 'frank')] });
    await call(ours, 'delete_entities', { entityNames: ['frank'] });
    const log = await rows(`SELECT r.entity, split_part(r.attribute, ':', 1) AS attribute, l.action, l.reason, l.note
      FROM memtx.rollback_log l JOIN memtx.records r ON r.id = l.record_id
      WHERE l.root_id = (SELECT id FROM memtx.records WHERE entity = 'kg:frank' AND attribute = 'entityType')
      ORDER BY l.id`);
    assert.deepEqual(log, [
      { entity: 'kg:frank', attribute: 'entityType', action: 'revoked', reason: 'revoked', note: 'delete_entities' },
      { entity: 'kg:frank', attribute: 'observation', action: 'revoked', reason: 'revoked_parent', note: 'delete_entities' },
      { entity: 'kg:eve', attribute: 'relation', action: 'revoked', reason: 'revoked_parent', note: 'delete_entities' },
    ]);
    assert.deepEqual(await rows('SELECT * FROM memtx.check_invariants()'), []);
  });
});
