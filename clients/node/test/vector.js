/**
 * Fixtures of the tests that need memtx_vector (and so pgvector >= 0.8.0 in
 * the server): whether it can be installed, a deterministic embedder, and
 * the vectors' arithmetic the tests check scores with.
 */
import assert from 'node:assert/strict';
import pg from 'pg';

/** How to install pgvector, said when a test skips for want of it. */
export const INSTALL = 'install pgvector 0.8.0 or later (apt install postgresql-15-pgvector, '
  + 'or bash scripts/deps.sh, which builds it from the vendored tarball)';

/**
 * Why the server cannot run memtx_vector (null: it can).
 * @param {{ query: Function }} admin a superuser's client
 */
export async function vectorMissing(admin) {
  const { rows } = await admin.query(`SELECT default_version FROM pg_available_extensions WHERE name = 'vector'`);
  if (!rows.length) return `pgvector is not installed in this server: ${INSTALL}`;
  const [major, minor] = rows[0].default_version.split('.').map(Number);
  return major === 0 && minor < 8 ? `pgvector ${rows[0].default_version} is older than 0.8.0: ${INSTALL}` : null;
}

/**
 * vectorMissing of the server the PG* environment names, asked once when a
 * test file loads (node:test needs to know what it skips as it defines the tests).
 */
export async function serverVectorMissing() {
  const client = new pg.Client({ database: process.env.PGDATABASE || 'postgres' });
  await client.connect();
  try {
    return await vectorMissing(client);
  } finally {
    await client.end();
  }
}

/**
 * The options of node:test's test() for a file that needs memtx_vector:
 * skipped, with the reason, when the server cannot run it -- except under CI
 * (env CI set), where the tests run and fail: a skip there is a failure.
 * @param {string | null} missing what vectorMissing said
 */
export function needsVector(missing) {
  return missing && !process.env.CI ? { skip: missing } : {};
}

/** The words the test embedder knows, one dimension each (the first dimension is a constant). */
export const WORDS = ['cat', 'dog', 'fish', 'car', 'boat', 'plane', 'red', 'blue'];
export const DIMS = WORDS.length + 1;

/**
 * A text's vector: 1 in the first dimension, then how often each known word
 * occurs in it (lower case, as whole words).  Deterministic, never zero.
 * @param {string} text
 */
export function vectorOf(text) {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return [1, ...WORDS.map((w) => words.filter((x) => x === w).length)];
}

/**
 * An embedder of texts (LangGraph's `embed`) that counts its calls and the
 * texts it was given.
 */
export function countingEmbedder() {
  const calls = /** @type {string[][]} */ ([]);
  const embed = async (/** @type {string[]} */ texts) => { calls.push(texts); return texts.map(vectorOf); };
  return { embed, calls };
}

/** @param {number[]} a @param {number[]} b */
const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
/** Cosine similarity. @param {number[]} a @param {number[]} b */
export const cosine = (a, b) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
/** Euclidean distance. @param {number[]} a @param {number[]} b */
export const l2 = (a, b) => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]) ** 2, 0));
export { dot };

/** Asserts two numbers equal within single-precision rounding. @param {number} got @param {number} want @param {string} [what] */
export function near(got, want, what) {
  assert.equal(typeof got, 'number', `${what ?? 'score'} is a number`);
  assert.ok(Math.abs(got - want) < 1e-5, `${what ?? 'score'}: ${got} is not ${want}`);
}
