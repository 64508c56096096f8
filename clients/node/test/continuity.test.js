// The continuity layer (SPEC §10, §12, §13) through the Node client: propose
// and its lost replies, history and as-of reads, restore, fencing, erasure.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';

import pg from 'pg';

import { Conflict, InvalidArgument, Memory, NoTransaction, PermissionDenied } from '../src/memory.js';
import { freshDatabase } from './db.js';

const DATABASE = 'memtx_node_continuity';
const AGENT = 'memtx_node_cont_agent';
const OTHER = 'memtx_node_cont_other';
const FENCED = 'memtx_node_cont_fenced';
const NS = 'ops';
let fx;
/** @type {Memory} */ let agent;
/** @type {Memory} */ let other;
/** @type {Memory} */ let fenced;
/** @type {Memory} */ let harness;

before(async () => {
  fx = await freshDatabase(DATABASE, [AGENT, OTHER, FENCED]);
  for (const role of [AGENT, OTHER, FENCED]) await fx.harness.query('SELECT memtx.grant_namespace($1, $2)', [NS, role]);
  agent = new Memory(await fx.connect(AGENT), { namespace: NS });
  other = new Memory(await fx.connect(OTHER), { namespace: NS });
  fenced = new Memory(await fx.connect(FENCED), { namespace: NS });
  harness = new Memory(fx.harness, { namespace: NS });
});
after(async () => fx?.drop());

/** Row counts of what a memtx write leaves behind, read by the harness. */
async function written() {
  const { rows: [row] } = await fx.harness.query(`SELECT (SELECT count(*) FROM memtx.records) AS records,
    (SELECT count(*) FROM memtx.transactions) AS transactions, (SELECT count(*) FROM memtx.history) AS history,
    (SELECT count(*) FROM memtx.rollback_log) AS repairs`);
  return row;
}

/**
 * When the record became committed (shifted by `shift`), as the server's text:
 * a Date would lose the microseconds.
 * @param {number} record
 * @param {string} [shift]
 */
async function committedAt(record, shift = '0') {
  const { rows: [row] } = await fx.harness.query(
    "SELECT (at + $2::interval)::text AS at FROM memtx.history WHERE record_id = $1 AND state = 'committed'",
    [record, shift]);
  return row.at;
}

/** A record's state and reason, read by the harness. @param {number} record */
async function stateOf(record) {
  const { rows: [row] } = await fx.harness.query('SELECT state::text, reason FROM memtx.records WHERE id = $1', [record]);
  return [row.state, row.reason];
}

// ---------------------------------------------------------------- propose

test('propose commits one record in one call and leaves the session alone', async () => {
  const result = await agent.propose('order:1', 'status', { state: 'open' }, { confidence: 0.9 });
  assert.deepEqual(Object.keys(result), ['tx_id', 'record_id', 'state', 'reason']);
  assert.equal(typeof result.tx_id, 'number');
  assert.deepEqual([result.state, result.reason], ['committed', null]);
  assert.equal(agent.isOpen, false);
  const [head] = await agent.lookup('order:1', 'status');
  assert.deepEqual([head.id, head.tx_id, head.value], [result.record_id, result.tx_id, { state: 'open' }]);
  const weak = await agent.propose('order:1', 'fraud', true, { confidence: 0.1 });
  assert.deepEqual([weak.state, weak.reason], ['quarantined', 'low_evidence']);
});

test('propose with a stale head is quarantined with stale_head', async () => {
  const first = await agent.propose('order:2', 'status', 'open', { scope: 'public', writers: [OTHER] });
  const moved = await other.propose('order:2', 'status', 'shipped', { expected_head: first.record_id });
  assert.deepEqual([moved.state, moved.reason], ['committed', null]);
  for (const expected_head of [0, first.record_id]) {
    const stale = await agent.propose('order:2', 'status', 'cancelled', { expected_head });
    assert.deepEqual([stale.state, stale.reason], ['quarantined', 'stale_head']);
  }
});

test('a propose retry returns the result and writes nothing; other content is a Conflict', async () => {
  const first = await agent.propose('order:3', 'status', 'open', { proposal: 'p-3' });
  const before = await written();
  assert.deepEqual(await agent.propose('order:3', 'status', 'open', { proposal: 'p-3' }), first);
  assert.deepEqual(await written(), before);
  await assert.rejects(agent.propose('order:3', 'status', 'closed', { proposal: 'p-3' }),
    (err) => err instanceof Conflict && err.sqlstate === '23505' && !err.retryable
      && err.detail.includes(String(first.record_id)));
  await assert.rejects(agent.propose('order:3', 'status', 'open', { confidence: 1.5, proposal: 'p-3b' }),
    (err) => err instanceof InvalidArgument && err.sqlstate === '22003');
  assert.deepEqual(await written(), before);
});

/**
 * A TCP proxy to the server that loses a reply: once the client has sent
 * bytes containing `loseReplyTo` (set it to arm), the server's next bytes are
 * dropped and both connections closed, as when the network fails after the
 * server acted and before the client heard.  Needs an unencrypted connection.
 */
async function replyLosingProxy() {
  const upstream = (process.env.PGHOST ?? 'localhost').startsWith('/')
    ? { path: `${process.env.PGHOST}/.s.PGSQL.${process.env.PGPORT ?? 5432}` }
    : { host: process.env.PGHOST ?? 'localhost', port: Number(process.env.PGPORT ?? 5432) };
  const proxy = { loseReplyTo: /** @type {string | null} */ (null), lost: false, port: 0, close: () => {} };
  const server = net.createServer((client) => {
    const db = net.connect(upstream);
    let sentMarker = false;
    client.on('data', (data) => {
      sentMarker ||= proxy.loseReplyTo !== null && data.includes(proxy.loseReplyTo);
      db.write(data);
    });
    db.on('data', (data) => {
      if (!sentMarker) { client.write(data); return; }
      proxy.lost = true;
      client.destroy();
      db.destroy();
    });
    for (const [a, b] of [[client, db], [db, client]]) {
      a.on('close', () => b.destroy());
      a.on('error', () => b.destroy());
    }
  });
  await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  proxy.port = /** @type {net.AddressInfo} */ (server.address()).port;
  proxy.close = () => server.close();
  return proxy;
}

test('a lost propose reply is recovered by outcome and by a retry under the same proposal id', async () => {
  const proxy = await replyLosingProxy();
  const conn = new pg.Client({ host: '127.0.0.1', port: proxy.port, database: DATABASE, user: AGENT,
    password: fx.password, ssl: false });
  conn.on('error', () => {}); // the lost connection is this test's point
  try {
    await conn.connect();
    const lossy = new Memory(conn, { namespace: NS });
    assert.deepEqual(await lossy.lookup('order:4'), []); // replies pass until armed
    // a call is one statement: its reply comes after it committed
    proxy.loseReplyTo = 'memtx.propose';
    await assert.rejects(lossy.propose('order:4', 'status', 'open', { proposal: 'p-4' }),
      (err) => !(err instanceof Error && 'sqlstate' in err) && /terminated/i.test(err.message));
    assert.equal(proxy.lost, true);
    const found = await agent.outcome('p-4');
    assert.ok(found);
    assert.deepEqual([found.state, found.reason, found.tx_status], ['committed', null, 'committed']);
    const before = await written();
    assert.deepEqual(await agent.propose('order:4', 'status', 'open', { proposal: 'p-4' }),
      { tx_id: found.tx_id, record_id: found.record_id, state: 'committed', reason: null });
    assert.deepEqual(await written(), before);
    assert.deepEqual((await agent.lookup('order:4', 'status')).map((r) => r.id), [found.record_id]);
  } finally {
    await conn.end().catch(() => {});
    proxy.close();
  }
});

// -------------------------------------------------------- history, the past

test('history lists each state change of a record in order, under its RLS', async () => {
  await agent.begin();
  const id = await agent.stage('order:5', 'status', 'open');
  await agent.commit();
  await agent.revoke(id, 'wrong order');
  const history = await agent.history(id);
  assert.deepEqual(history.map((h) => [h.record_id, h.state, h.reason]),
    [[id, 'tentative', null], [id, 'committed', null], [id, 'revoked', 'revoked']]);
  assert.ok(history.every((h) => h.at instanceof Date && typeof h.pos === 'number'));
  assert.deepEqual(history.map((h) => h.pos), history.map((h) => h.pos).sort((a, b) => a - b));
  // a proposal is settled within its one call (SPEC §21): its first history
  // row is its settled state, nobody having seen it tentative
  const { record_id: proposed } = await agent.propose('order:5b', 'status', 'open');
  assert.deepEqual((await agent.history(proposed)).map((h) => [h.state, h.reason]), [['committed', null]]);
  assert.deepEqual(await other.history(id), []);
  assert.deepEqual(await agent.history(987654321), []);
});

test('readAsOf sees the slot as it was, in transaction time and in valid time', async () => {
  const first = await agent.propose('order:6', 'status', 'open', { valid: '[2020-01-01 00:00+00,)' });
  const then = await committedAt(first.record_id);
  const second = await agent.propose('order:6', 'status', 'shipped', { expected_head: first.record_id });
  const now = await committedAt(second.record_id);
  const shown = (records) => records.map((r) => [r.id, r.value, r.state]);
  assert.deepEqual(shown(await agent.readAsOf(then, { entity: 'order:6', attribute: 'status' })),
    [[first.record_id, 'open', 'committed']]);
  assert.deepEqual(shown(await agent.readAsOf(now, { entity: 'order:6' })),
    [[second.record_id, 'shipped', 'committed']]);
  assert.deepEqual(await agent.readAsOf(await committedAt(first.record_id, '-1 microsecond'), { entity: 'order:6' }), []);
  assert.deepEqual((await agent.readAsOf(then, { entity: 'order:6', valid_at: '2021-06-01 00:00+00' })).map((r) => r.id),
    [first.record_id]);
  assert.deepEqual(await agent.readAsOf(then, { entity: 'order:6', valid_at: new Date('2019-01-01T00:00:00Z') }), []);
});

// ---------------------------------------------------------------- restore

test('restore stages a past value over the current head, and the pipeline admits it', async () => {
  const first = await agent.propose('order:7', 'status', 'open', { confidence: 0.8 });
  const then = await committedAt(first.record_id);
  const second = await agent.propose('order:7', 'status', 'lost', { expected_head: first.record_id });
  let restored;
  await agent.turn(async (m) => {
    restored = await m.restore('order:7', 'status', then);
    const staged = (await m.read('order:7', 'status')).find((r) => r.id === restored);
    assert.deepEqual([staged.value, staged.confidence, staged.state], ['open', 0.8, 'tentative']);
  });
  assert.deepEqual(agent.lastCommit, [{ record_id: restored, state: 'committed', reason: null }]);
  const { rows: [row] } = await fx.harness.query(
    'SELECT restored_from::int, expected_head::int FROM memtx.records WHERE id = $1', [restored]);
  assert.deepEqual(row, { restored_from: first.record_id, expected_head: second.record_id });
  assert.deepEqual(await stateOf(second.record_id), ['superseded', null]);
});

test('restore with no record active then is refused with 22023 and stages nothing', async () => {
  const first = await agent.propose('order:8', 'status', 'open');
  const before = await committedAt(first.record_id, '-1 microsecond');
  await assert.rejects(new Memory(agent.db, { namespace: NS }).restore('order:8', 'status', before), NoTransaction);
  await agent.turn(async (m) => {
    await assert.rejects(m.restore('order:8', 'status', before),
      (err) => err instanceof InvalidArgument && err.sqlstate === '22023');
    await assert.rejects(m.restore('order:8', 'nothing', await committedAt(first.record_id)), InvalidArgument);
    assert.deepEqual((await m.read('order:8')).map((r) => r.id), [first.record_id]);
  });
  assert.deepEqual(agent.lastCommit, []);
});

// --------------------------------------------------------------- fencing

test('fence refuses the role until unfence; a transaction from before stays refused', async () => {
  const oldTx = await fenced.begin();
  const pending = await fenced.stage('order:9', 'status', 'open');
  const epoch = await harness.fence(FENCED);
  try {
    assert.ok(epoch >= 1);
    const [last] = (await harness.writerEpochs(FENCED)).slice(-1);
    assert.deepEqual([last.role_name, last.epoch, last.unfenced_at], [FENCED, epoch, null]);
    assert.ok(last.fenced_at instanceof Date);
    assert.deepEqual(await stateOf(pending), ['revoked', 'fenced']);
    await assert.rejects(fenced.propose('order:9', 'status', 'open'),
      (err) => err instanceof PermissionDenied && err.sqlstate === '42501' && !err.retryable);
    await assert.rejects(fenced.begin(), PermissionDenied);
    assert.deepEqual(await fenced.lookup('order:9'), []); // reads without a transaction answer
  } finally {
    await harness.unfence(FENCED);
  }
  assert.ok((await harness.writerEpochs(FENCED)).at(-1).unfenced_at instanceof Date);
  assert.equal((await fenced.propose('order:9', 'status', 'open')).state, 'committed');
  await assert.rejects(new Memory(fenced.db, { namespace: NS, tx: oldTx }).commit(), PermissionDenied);
  // a role sees its own fences only; fencing is a harness operation
  assert.deepEqual((await fenced.writerEpochs()).map((e) => e.epoch), (await harness.writerEpochs(FENCED)).map((e) => e.epoch));
  assert.deepEqual(await other.writerEpochs(FENCED), []);
  await assert.rejects(other.fence(FENCED), (err) => err instanceof PermissionDenied && err.sqlstate === '42501');
  assert.equal((await harness.writerEpochs(FENCED)).at(-1).epoch, epoch);
});

// --------------------------------------------------------------- erasure

test('erase removes the value, keeps the history, and a second erase writes nothing', async () => {
  const { record_id: id } = await agent.propose('customer:10', 'email', 'someone@example.com');
  await assert.rejects(agent.erase(id), PermissionDenied);
  const repairs = await harness.erase(id, 'erasure request 10');
  assert.deepEqual(repairs.map((r) => [r.record_id, r.action, r.reason, r.note]),
    [[id, 'revoked', 'erased', 'erasure request 10']]);
  const { rows: [row] } = await fx.harness.query(
    "SELECT value = 'null'::jsonb AS nulled, erased_at IS NOT NULL AS erased FROM memtx.records WHERE id = $1", [id]);
  assert.deepEqual(row, { nulled: true, erased: true });
  assert.deepEqual((await agent.history(id)).map((h) => [h.state, h.reason]).at(-1), ['revoked', 'erased']);
  const before = await written();
  assert.deepEqual(await harness.erase(id), []);
  assert.deepEqual(await written(), before);
});
