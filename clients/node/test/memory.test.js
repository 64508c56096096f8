// The Node client (src/memory.js) against a real memtx: a turn, recall and
// lookup, gate and act, errors by SQLSTATE, revoke, tool definitions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  callSql, errorClass, fencedTransaction, fromPg, InvalidArgument, Memory, MemtxError, NoTransaction, NotFound,
  PermissionDenied, Retryable,
} from '../src/memory.js';
import { freshDatabase } from './db.js';

const AGENT = 'memtx_node_mem_agent';
const OUTSIDER = 'memtx_node_mem_outsider';
const READER = 'memtx_node_mem_reader';
let fx;
/** @type {Memory} */
let mem;

before(async () => {
  fx = await freshDatabase('memtx_node_memory', [AGENT, OUTSIDER, READER]);
  await fx.harness.query(`SELECT memtx.grant_namespace('support', '${AGENT}')`);
  await fx.harness.query(`SELECT memtx.grant_namespace('support', '${READER}')`);
  await fx.harness.query("SELECT memtx.register_source('order_lookup', 0.8)");
  await fx.harness.query("SELECT memtx.register_tool('issue_refund', reversible => false)");
  mem = new Memory(await fx.connect(AGENT), { namespace: 'support' });
});
after(async () => fx?.drop());

describe('callSql', () => {
  test('names every given argument with its SQL type and leaves the others to their defaults', () => {
    const [text, values] = callSql('stage', { tx: 3, entity: 'e', attribute: 'a', value: null, kind: undefined, source: null });
    assert.equal(text, 'SELECT * FROM memtx.stage(tx => $1::bigint, entity => $2::text, attribute => $3::text, value => $4::jsonb)');
    assert.deepEqual(values, [3, 'e', 'a', 'null']);
  });

  test('refuses an argument the function does not have', () => {
    assert.throws(() => callSql('commit', { tx: 1, force: true }), /memtx.commit has no argument force/);
  });

  test('an enum argument outside its labels is refused naming the argument and the labels', () => {
    assert.throws(() => callSql('stage', { tx: 1, entity: 'e', attribute: 'a', value: 1, kind: 'fact' }),
      (err) => err instanceof InvalidArgument && err.sqlstate === '22P02'
        && err.message === 'kind must be one of belief, summary, profile, index_entry, shared_copy, tool_action; got "fact"');
    assert.throws(() => callSql('begin', { tier: 'urgent' }), /tier must be one of low, medium, high, external_action/);
    assert.throws(() => new Memory(null, { scope: 'team' }), /scope must be one of private, shared, public; got "team"/);
  });

  test('a JSON argument that JSON cannot carry is a TypeError naming it', () => {
    assert.throws(() => callSql('stage', { tx: 1, entity: 'e', attribute: 'a', value: { tags: new Set(['x']) } }),
      { name: 'TypeError', message: 'value.tags must be JSON: a Set is not (use an array)' });
    assert.throws(() => callSql('act', { tx: 1, tool: 't', args: [1, NaN] }), { name: 'TypeError', message: 'args[1] must be JSON: NaN is not a JSON number' });
    assert.throws(() => callSql('act', { tx: 1, tool: 't', args: 10n }), /args must be JSON: a bigint is not/);
    assert.deepEqual(callSql('act', { tx: 1, tool: 't', args: { a: undefined, d: new Date(0) } })[1],
      [1, 't', '{"d":"1970-01-01T00:00:00.000Z"}']);
  });

  test("outcome's agent (SPEC §17) is sent only when given", () => {
    assert.equal(callSql('outcome', { proposal: 'p', namespace: 'n' })[0],
      'SELECT * FROM memtx.outcome(proposal => $1::text, namespace => $2::text)');
    assert.match(callSql('outcome', { proposal: 'p', namespace: 'n', agent: 'a' })[0], /agent => \$3::text\)$/);
  });
});

test('fencedTransaction names the transaction a fence refused, and nothing else', () => {
  const err = (sqlstate, message) => new MemtxError(message, { sqlstate });
  assert.equal(fencedTransaction(err('42501', 'memtx transaction 42 was fenced')), 42);
  assert.equal(fencedTransaction(err('42501', 'role "a" is fenced')), null);
  assert.equal(fencedTransaction(err('25000', 'memtx transaction 42 was fenced')), null);
  assert.equal(fencedTransaction(new Error('memtx transaction 42 was fenced')), null);
});

test('fromPg maps the server errors by SQLSTATE and leaves socket and connection errors alone', () => {
  const mapped = fromPg(Object.assign(new Error('value out of range'), { severity: 'ERROR', code: '22003', detail: 'd' }));
  assert.ok(mapped instanceof InvalidArgument);
  assert.deepEqual(mapped.toJSON(), { sqlstate: '22003', message: 'value out of range', detail: 'd', hint: null });
  assert.equal(fromPg(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })), null);
  assert.equal(fromPg(Object.assign(new Error('terminating'), { severity: 'FATAL', code: '08006' })), null);
  assert.equal(errorClass('40P01'), Retryable);
  assert.equal(errorClass('XX000'), MemtxError);
});

describe('Memory', () => {
  let belief;

  test('a turn stages, is gated while the belief is tentative, and commits', async () => {
    const seen = await mem.turn(async (m) => {
      belief = await m.stage('order:841', 'refund_eligible', { eligible: true, reason: 'lamp broken' },
        { source: 'order_lookup', confidence: 0.9 });
      assert.equal(typeof belief, 'number');
      assert.deepEqual(await m.gate('issue_refund'),
        { allowed: false, reason: 'in_flight_tentative', blockers: [belief] });
      return m.tx;
    });
    assert.equal(mem.isOpen, false);
    assert.equal(typeof seen, 'number');
    assert.deepEqual(mem.lastCommit, [{ record_id: belief, state: 'committed', reason: null }]);
  });

  test('recall ranks what the transaction sees; lookup needs no transaction', async () => {
    await mem.turn(async (m) => {
      const hits = await m.recall('refund for order 841', { k: 3 });
      assert.equal(hits.length, 1);
      assert.equal(hits[0].record_id, belief);
      assert.deepEqual(hits[0].value, { eligible: true, reason: 'lamp broken' });
      assert.ok(hits[0].rank > 0);
      assert.deepEqual(await m.recall('the the'), []);
      const [rec] = await m.read('order:841');
      assert.equal(rec.id, belief);
      assert.equal(rec.state, 'committed');
      assert.equal(typeof rec.valid, 'string');
    });
    const found = await mem.lookup('order:841', 'refund_eligible');
    assert.deepEqual(found.map((r) => [r.id, r.state, r.source]), [[belief, 'committed', 'order_lookup']]);
    assert.deepEqual(await mem.lookup('order:999'), []);
  });

  test('act allows a call on committed inputs and an effect key makes it at-most-once', async () => {
    await mem.turn(async (m) => {
      const first = await m.act('issue_refund', { order: 841 }, [belief], 'refund-841');
      assert.equal(first.allowed, true);
      assert.equal(typeof first.action_id, 'number');
      assert.deepEqual(await m.act('issue_refund', { order: 841 }, [belief], 'refund-841'), { ...first, repeated: true });
      assert.equal(first.repeated, false);
      await assert.rejects(m.act('issue_refund', { order: 842 }, [belief], 'refund-841'),
        (err) => err instanceof MemtxError && err.sqlstate === '23505');
    });
  });

  test('errors carry the SQLSTATE and a class by it; a failed call leaves the turn usable', async () => {
    await mem.begin();
    await assert.rejects(mem.stage('order:841', 'refund_eligible', true, { confidence: 1.5 }),
      (err) => err instanceof InvalidArgument && err.sqlstate === '22003' && !err.retryable);
    await assert.rejects(mem.revoke(987654321),
      (err) => err instanceof NotFound && err.sqlstate === '42704');
    const id = await mem.stage('order:841', 'note', 'customer called');
    const repairs = await mem.abort();
    assert.ok(repairs.some((r) => r.record_id === id && r.reason === 'aborted'), JSON.stringify(repairs));
    assert.equal(mem.isOpen, false);
  });

  test('a turn whose body throws is aborted and the error rethrown', async () => {
    let tx;
    await assert.rejects(mem.turn(async (m) => {
      tx = m.tx;
      await m.stage('order:841', 'note', 'half done');
      throw new Error('model gave up');
    }), /model gave up/);
    const { rows } = await fx.harness.query('SELECT status::text FROM memtx.transactions WHERE id = $1', [tx]);
    assert.deepEqual(rows, [{ status: 'aborted' }]);
  });

  test('without a turn a transaction call throws NoTransaction', async () => {
    const fresh = new Memory(mem.db, { namespace: 'support' });
    assert.throws(() => fresh.tx, NoTransaction);
    await assert.rejects(fresh.read(), NoTransaction);
  });

  test('a namespace the role is not a member of is refused with 42501', async () => {
    const outsider = new Memory(await fx.connect(OUTSIDER), { namespace: 'support' });
    await assert.rejects(outsider.begin(), (err) => err instanceof PermissionDenied && err.sqlstate === '42501');
  });

  test('revoke repairs what was derived from the belief', async () => {
    const repairs = await mem.revoke(belief, 'lamp was fine');
    assert.equal(repairs[0].record_id, belief);
    assert.equal(repairs[0].note, 'lamp was fine');
    const [rec] = await (await fx.harness.query('SELECT state::text FROM memtx.records WHERE id = $1', [belief])).rows;
    assert.equal(rec.state, 'revoked');
    assert.ok(repairs.length > 1, 'the refund derived from the belief is repaired too');
  });

  test('a session permission block applies to what it stages and proposes, unless a call gives its own', async () => {
    const sharing = new Memory(mem.db, { namespace: 'support', scope: 'shared', readers: [READER] });
    const reader = new Memory(await fx.connect(READER), { namespace: 'support' });
    let staged;
    let own;
    await sharing.turn(async (m) => {
      staged = await m.stage('order:860', 'note', 'for the reader');
      own = await m.stage('order:860', 'secret', 'mine', { scope: 'private', readers: [] });
    });
    const proposed = await sharing.propose('order:861', 'note', 'also for the reader');
    assert.deepEqual((await reader.lookup('order:860')).map((r) => [r.id, r.scope, r.readers]),
      [[staged, 'shared', [READER]]]);
    assert.deepEqual((await reader.lookup('order:861')).map((r) => r.id), [proposed.record_id]);
    // without the block the records are private to their owner: the reader sees nothing
    const privately = await mem.propose('order:862', 'note', 'not for the reader');
    assert.equal(privately.state, 'committed');
    assert.deepEqual(await reader.lookup('order:862'), []);
    assert.ok(own > staged);
  });

  test('act warns about a tool memtx never registered, unless allowed; a registered one acts silently', async () => {
    const warnings = [];
    const listen = (w) => { if (w.code === 'MEMTX_UNREGISTERED_TOOL') warnings.push(w.message); };
    process.on('warning', listen);
    try {
      await mem.turn(async (m) => {
        const made = await m.act('isue_refund', { order: 1 });
        assert.equal(made.allowed, true, 'memtx allows it: an unregistered tool is legal (irreversible)');
        await m.act('isue_refund', { order: 2 }, [], undefined, { allowUnregistered: true });
        await new Memory(mem.db, { namespace: 'support', allowUnregisteredTools: true, tx: m.tx }).act('isue_refund', { order: 3 });
        await m.act('issue_refund', { order: 4 });
      });
      await new Promise((resolve) => { setImmediate(resolve); });
      assert.equal(warnings.length, 1);
      assert.match(warnings[0], /tool "isue_refund" is not registered; memtx treats it as irreversible/);
    } finally {
      process.off('warning', listen);
    }
  });

  test('lookup and recall at a validity instant (SPEC §18)', async () => {
    // valid now (the commit checks that), and until 2099
    const window = '[2020-01-01 00:00+00,2099-01-01 00:00+00)';
    const { record_id: id, state } = await mem.propose('order:870', 'promo', 'long sale', { valid: window });
    assert.equal(state, 'committed');
    assert.deepEqual((await mem.lookup('order:870', 'promo', { valid_at: '2098-12-31 00:00+00' })).map((r) => r.id), [id]);
    assert.deepEqual(await mem.lookup('order:870', 'promo', { valid_at: new Date('2099-01-01T00:00:00Z') }), []);
    await mem.turn(async (m) => {
      assert.deepEqual((await m.recall('long sale', { valid_at: '2098-12-31 00:00+00' })).map((h) => h.record_id), [id]);
      assert.deepEqual(await m.recall('long sale', { valid_at: '2099-06-01 00:00+00' }), []);
    });
  });

  test('toolSpecs lists the memory tools and the registered domain tools, per format', async () => {
    const names = (await mem.toolSpecs('mcp')).map((s) => s.name);
    assert.deepEqual(names, ['memory_recall', 'memory_read', 'memory_stage', 'memory_commit',
      'memory_abort', 'memory_revoke', 'memory_outcome', 'issue_refund']);
    assert.equal((await mem.toolSpecs())[0].type, 'function');
    await assert.rejects(mem.toolSpecs('gemini'), (err) => err.sqlstate === '22023');
  });
});
