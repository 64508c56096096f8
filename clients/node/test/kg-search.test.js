// The knowledge-graph tools' statements and the optional indexed search
// (setupSearch, memtx-mcp --setup-graph-search): each write tool is one
// round trip, each read one; memtx_kg.can_read is memtx.can_read for a given
// role; memtx_kg.node_records reads as the calling role only, finds what the
// scan finds, and goes through its indexes, not through the graph.  (The
// answers themselves are compared with the reference server's, with and
// without the setup, in kg-diff.test.js.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import pg from 'pg';

import { resources, setupSearch, tools } from '../src/kg.js';
import { createServer } from '../src/mcp.js';
import { freshDatabase } from './db.js';

const DATABASE = 'memtx_node_kg_search';
const [AGENT, PEER, STRANGER, TEAM] = ['kg_search_agent', 'kg_search_peer', 'kg_search_stranger', 'kg_search_team'];
let fx;

before(async () => {
  fx = await freshDatabase(DATABASE, [AGENT, PEER, STRANGER, TEAM]);
  await fx.harness.query(`GRANT ${TEAM} TO ${PEER}`);
  for (const role of [AGENT, PEER, STRANGER]) await fx.harness.query('SELECT memtx.grant_namespace($1, $2)', ['kg', role]);
});
after(async () => fx?.drop());

/**
 * What a client sends, counted on the wire: round trips (a simple Query or
 * an extended Sync).
 * @param {pg.Client} client
 */
function wireCounts(client) {
  const counts = { roundTrips: 0 };
  const wire = /** @type {any} */ (client).connection;
  for (const method of ['query', 'sync']) {
    const send = wire[method].bind(wire);
    wire[method] = (/** @type {any[]} */ ...args) => { counts.roundTrips += 1; return send(...args); };
  }
  return counts;
}

/** An in-process memtx-mcp session of role on its own connection. @param {string} role @param {object} [options] */
async function session(role, options = {}) {
  const db = await fx.connect(role);
  return { db, ...createServer({ db, namespace: 'kg', extraTools: tools, resources, ...options }) };
}

/** A tool's structuredContent, or its error text. */
async function call(/** @type {any} */ s, /** @type {string} */ name, /** @type {any} */ args) {
  const r = await s.callTool(name, args);
  return r.isError ? { error: r.content[0].text } : r.structuredContent;
}

describe('without the optional setup', () => {
  test('each write tool is one round trip, each read one (the deletes two)', async () => {
    const { db, session: s } = await session(AGENT);
    const wire = wireCounts(db);
    const rounds = async (/** @type {string} */ name, /** @type {any} */ args) => {
      wire.roundTrips = 0;
      const answer = await call(s, name, args);
      assert.equal(answer.error, undefined, `${name}: ${answer.error}`);
      return wire.roundTrips;
    };
    // the first read asks once whether the database has the optional search
    await rounds('search_nodes', { query: 'nothing yet' });
    const counted = {
      create_entities: await rounds('create_entities', { entities: [
        { name: 'ada', entityType: 'person', observations: ['writes programs', 'likes tea'] },
        { name: 'charles', entityType: 'person', observations: ['builds engines'] }] }),
      create_relations: await rounds('create_relations', { relations: [{ from: 'ada', to: 'charles', relationType: 'knows' }] }),
      add_observations: await rounds('add_observations', { observations: [{ entityName: 'ada', contents: ['a poet'] },
        { entityName: 'charles', contents: ['a mathematician'] }] }),
      search_nodes: await rounds('search_nodes', { query: 'ENGINE' }),
      open_nodes: await rounds('open_nodes', { names: ['ada'] }),
      read_graph: await rounds('read_graph', {}),
      delete_observations: await rounds('delete_observations', { deletions: [{ entityName: 'ada', observations: ['a poet'] }] }),
      delete_relations: await rounds('delete_relations', { relations: [{ from: 'ada', to: 'charles', relationType: 'knows' }] }),
      delete_entities: await rounds('delete_entities', { entityNames: ['charles'] }),
    };
    assert.deepEqual(counted, { create_entities: 1, create_relations: 1, add_observations: 1, search_nodes: 1,
      open_nodes: 1, read_graph: 1, delete_observations: 2, delete_relations: 2, delete_entities: 2 });
    assert.deepEqual(await call(s, 'read_graph', {}), { entities: [{ name: 'ada', entityType: 'person',
      observations: ['writes programs', 'likes tea'] }], relations: [] });
  });

  test('an add to a missing entity stages nothing and aborts its memtx transaction; a repeat adds nothing', async () => {
    const { session: s } = await session(AGENT);
    assert.deepEqual(await call(s, 'add_observations', { observations: [{ entityName: 'ada', contents: ['x'] },
      { entityName: 'nobody', contents: ['y'] }] }), { error: 'Entity with name nobody not found' });
    assert.deepEqual(await call(s, 'add_observations', { observations: [{ entityName: 'ada', contents: ['likes tea', 'hums'] },
      { entityName: 'ada', contents: ['hums', 'likes tea'] }] }),
    { results: [{ entityName: 'ada', addedObservations: ['hums'] }, { entityName: 'ada', addedObservations: [] }] });
    const { rows } = await fx.harness.query(`SELECT t.status::text, count(r.id)::int AS staged
      FROM memtx.transactions t LEFT JOIN memtx.records r ON r.tx_id = t.id
      WHERE t.agent = $1 GROUP BY t.id, t.status ORDER BY t.id DESC LIMIT 2`, [AGENT]);
    assert.deepEqual(rows, [{ status: 'committed', staged: 1 }, { status: 'aborted', staged: 0 }]);
  });
});

describe('with the optional setup', () => {
  before(async () => {
    await setupSearch(fx.harness);
    await setupSearch(fx.harness); // idempotent
  });

  test('memtx_kg.can_read is memtx.can_read for the role it is given', async () => {
    const roles = [AGENT, PEER, STRANGER, TEAM, 'postgres'];
    const blocks = [];
    for (const owner of [AGENT, TEAM, 'no_such_role_kg', '']) {
      for (const readers of [[], [PEER], [TEAM], ['no_such_role_kg'], [STRANGER, TEAM]]) {
        for (const scope of ['private', 'shared', 'public']) blocks.push([owner, readers, scope]);
      }
    }
    for (const role of roles) {
      await fx.harness.query('SET ROLE ' + (role === 'postgres' ? 'NONE' : role));
      try {
        for (const [owner, readers, scope] of blocks) {
          const { rows: [r] } = await fx.harness.query(`SELECT memtx.can_read($1, $2, $3::memtx.scope) AS memtx,
              memtx_kg.can_read($4, $1, $2, $3::memtx.scope) AS mirror`, [owner, readers, scope, role]);
          assert.equal(r.mirror, r.memtx, `${role} reading ${JSON.stringify([owner, readers, scope])}`);
        }
      } finally {
        await fx.harness.query('RESET ROLE');
      }
    }
  });

  test('memtx_kg.node_records reads as the calling role, or one its session may become, only', async () => {
    const { session: peer } = await session(PEER, { scope: 'shared', readers: [TEAM] });
    await call(peer, 'create_entities', { entities: [{ name: 'bea', entityType: 'engineer', observations: ['shared with the team'] }] });
    const { session: stranger } = await session(STRANGER);
    const { session: agent } = await session(AGENT);
    assert.deepEqual((await call(stranger, 'search_nodes', { query: 'team' })).entities, []);
    assert.deepEqual((await call(agent, 'search_nodes', { query: 'team' })).entities, []);
    assert.deepEqual((await call(peer, 'search_nodes', { query: 'team' })).entities.map((e) => e.name), ['bea']);
    // a member of the readers' group finds it; its own graph is not the peer's
    await fx.harness.query(`GRANT ${TEAM} TO ${STRANGER}`);
    try {
      assert.deepEqual((await call(stranger, 'open_nodes', { names: ['bea'] })).entities.map((e) => e.name), ['bea']);
    } finally {
      await fx.harness.query(`REVOKE ${TEAM} FROM ${STRANGER}`);
    }
    const client = await fx.connect(STRANGER);
    await assert.rejects(client.query("SELECT memtx_kg.node_records('kg', 'team', NULL, $1)", [PEER]),
      (err) => err.code === '42501' && /permission denied to read as role/.test(err.message));
    const { rows } = await client.query("SELECT count(*)::int AS n FROM memtx_kg.node_records('kg', 'team', NULL)");
    assert.deepEqual(rows, [{ n: 0 }]);
  });

  test('a search goes through the indexes, never through the graph, and finds what the scan finds', async () => {
    // a graph of 2000 entities (6000 records, through the API), then statistics
    const { session: s } = await session(AGENT);
    for (let b = 0; b < 20; b += 1) {
      const entities = Array.from({ length: 100 }, (_, i) => ({ name: `e${b * 100 + i}`, entityType: `type${i % 7}`,
        observations: [`observation ${b * 100 + i} of batch ${b}`, i % 50 === 0 ? 'a rare needle' : `common ${i % 3}`] }));
      const made = await call(s, 'create_entities', { entities });
      assert.equal(made.entities.length, 100);
    }
    await call(s, 'create_relations', { relations: [{ from: 'e7', to: 'e100', relationType: 'precedes' },
      { from: 'e1999', to: 'e200', relationType: 'follows' }, { from: 'ghost', to: 'e100', relationType: 'haunts' }] });
    await fx.harness.query('ANALYZE memtx.records');
    // the plans of node_records' statement, as the agent runs it (auto_explain's nested plans, sent as notices)
    const client = await fx.connect(AGENT);
    const plans = [];
    const harness = new pg.Client({ database: DATABASE });
    await harness.connect();
    harness.on('notice', (n) => { if (/Query Text/.test(n.message)) plans.push(n.message); });
    try {
      await harness.query("LOAD 'auto_explain'");
      for (const setting of ['auto_explain.log_min_duration = 0', 'auto_explain.log_nested_statements = on',
        'client_min_messages = log', `ROLE ${AGENT}`]) await harness.query(`SET ${setting}`);
      const ids = async (/** @type {any} */ q, /** @type {any} */ names) => (await harness.query(
        'SELECT pg_catalog.array_agg(id ORDER BY id) AS ids FROM memtx_kg.node_records($1, $2, $3) id', ['kg', q, names])).rows[0].ids;
      const needle = await ids('RARE NEEDLE', null);
      const opened = await ids(null, ['e100']);
      await harness.query('RESET ROLE');
      // the names matching the query, then each name's records and the relations to it
      const matching = plans.filter((p) => /memtx\.records/.test(p) && /ILIKE/.test(p));
      const fetching = plans.filter((p) => /memtx\.records/.test(p) && /unnest\(hits\)/.test(p));
      assert.equal(matching.length, 1, plans.join('\n'));
      assert.equal(fetching.length, 2, plans.join('\n'));
      assert.match(matching[0], /Bitmap Index Scan on records_kg_search_idx/, matching[0]);
      for (const plan of [...matching, ...fetching]) assert.doesNotMatch(plan, /Seq Scan on records/, plan);
      for (const plan of fetching) {
        assert.match(plan, /Index Scan using records_slot_idx/, plan);
        assert.match(plan, /Index Scan using records_kg_relation_to_idx/, plan);
      }
      // the same ids as the scan: 40 needles (their type and two observations each), and the 3 relations to them
      // what they should be, from every record of the graph the agent can read (a model of the query, in JS)
      const all = (await client.query(`SELECT r.id::int, r.entity, r.attribute, r.value FROM memtx.records r
        WHERE r.namespace = 'kg' AND pg_catalog.starts_with(r.entity, 'kg:') AND memtx.is_active(r.state)`)).rows;
      const scanned = (/** @type {string | null} */ q, /** @type {string[] | null} */ names) => {
        const hit = new Set(names ?? []);
        for (const r of all) {
          const searched = r.attribute === 'entityType' || r.attribute.startsWith('observation:');
          if (q !== null && searched && `${r.entity.slice(3)}\n${r.value}`.toLowerCase().includes(q.toLowerCase())) {
            hit.add(r.entity.slice(3));
          }
        }
        return all.filter((r) => hit.has(r.entity.slice(3)) || (r.attribute.startsWith('relation:') && hit.has(r.value.to)))
          .map((r) => r.id).sort((a, b) => a - b);
      };
      assert.equal(needle.length, 40 * 3 + 3);
      assert.deepEqual(needle.map(Number), scanned('RARE NEEDLE', null));
      assert.equal(opened.length, 3 + 2);
      assert.deepEqual(opened.map(Number), scanned(null, ['e100']));
      // and the tools answer alike
      const found = await call(s, 'search_nodes', { query: 'rare NEEDLE' });
      assert.equal(found.entities.length, 40);
      assert.deepEqual(found.relations, [{ from: 'e7', to: 'e100', relationType: 'precedes' },
        { from: 'e1999', to: 'e200', relationType: 'follows' }, { from: 'ghost', to: 'e100', relationType: 'haunts' }]);
      assert.deepEqual((await call(s, 'open_nodes', { names: ['e100'] })).relations.map((r) => r.from), ['e7', 'ghost']);
    } finally {
      await harness.end();
    }
  });
});
