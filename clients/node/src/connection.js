/**
 * A PostgreSQL connection that outlives the server's restarts: what a
 * long-running process (memtx-mcp) holds instead of a bare `pg.Client`.
 *
 * It has pg's `query(text, values)`, so a Memory runs on it unchanged.
 * While the database is away -- never reached at start (down, a wrong
 * password, no such database), or lost later (a restart, a terminated
 * backend, a network cut) -- every query fails at once with
 * DatabaseUnavailable, whose message gives the cause, and the connection
 * tries again in the background with exponential backoff (0.25 s doubling up
 * to 30 s, with jitter).  A query that arrives while an attempt is under way
 * waits for that attempt.  Each change of state is reported through `log`
 * (memtx-mcp: stderr) once, not at every attempt: the first failure, a
 * different cause, the reconnection.
 *
 * A query cut off by the loss of its connection fails with
 * DatabaseUnavailable too: its outcome is unknown (the server may have
 * committed it before the connection broke); memtx's idempotent calls
 * (commit, proposal ids, effect keys) are how a caller finds out.  Errors the
 * server reports for a statement (ERROR severity) are not connection
 * failures and pass through as pg raised them.
 *
 * @module memtx/connection
 */
import pg from 'pg';

/** The database cannot be reached now; the message says why. */
export class DatabaseUnavailable extends Error {}

const MIN_DELAY_MS = 250;
const MAX_DELAY_MS = 30_000;

/**
 * Whether a pg error means the connection is gone (no server error of a
 * statement): a socket error, a connection timeout, the connection's
 * termination, or a FATAL/PANIC report (e.g. 57P01 on a restart) or class 08.
 * @param {any} err
 */
export function isConnectionError(err) {
  if (!err || typeof err !== 'object') return false;
  const code = typeof err.code === 'string' ? err.code : '';
  if (typeof err.severity === 'string') {
    return err.severity === 'FATAL' || err.severity === 'PANIC' || code.startsWith('08') || code.startsWith('57P0');
  }
  return true;
}

export class ResilientConnection {
  /**
   * @param {object} [options]
   * @param {pg.ClientConfig} [options.config] pg's client options (the rest from the PG* environment)
   * @param {(line: string) => void} [options.log] where state changes are reported
   * @param {string} [options.name] the prefix of every line logged
   * @param {(client: pg.Client) => Promise<void>} [options.onConnect] runs on each new connection
   * @param {number} [options.minDelayMs]
   * @param {number} [options.maxDelayMs]
   */
  constructor({ config = {}, log = () => {}, name = 'memtx', onConnect, minDelayMs = MIN_DELAY_MS,
    maxDelayMs = MAX_DELAY_MS } = {}) {
    this.config = { connectionTimeoutMillis: 10_000, keepAlive: true, ...config };
    this.log = log;
    this.name = name;
    this.onConnect = onConnect;
    this.minDelayMs = minDelayMs;
    this.maxDelayMs = maxDelayMs;
    /** @type {pg.Client | null} */ this.client = null;
    /** @type {Promise<pg.Client> | null} */ this.connecting = null;
    /** @type {NodeJS.Timeout | null} */ this.timer = null;
    /** the cause of the current outage, null while connected */
    this.cause = /** @type {string | null} */ (null);
    this.failures = 0;
    this.closed = false;
    /** called after every successful (re)connection that followed a failure */
    this.onReconnect = /** @type {(() => void) | null} */ (null);
  }

  /** Whether a connection is up now. */
  get connected() {
    return this.client !== null;
  }

  /**
   * Connect now (the first attempt); never throws: a failure is logged and
   * retried in the background.  Resolves true when connected.
   */
  async start() {
    try {
      await this.connect();
      return true;
    } catch {
      return false;
    }
  }

  /** One connection attempt (shared by concurrent callers); schedules the next on failure. */
  connect() {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.attempt().finally(() => { this.connecting = null; });
    return this.connecting;
  }

  async attempt() {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    const client = new pg.Client(this.config);
    // a connection lost while idle (a restart, a terminated backend) is reported here
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the server closed the connection')));
    try {
      await client.connect();
      if (this.onConnect) await this.onConnect(client);
    } catch (err) {
      client.end().catch(() => {});
      this.failed(/** @type {Error} */ (err));
      throw new DatabaseUnavailable(this.message(), { cause: err });
    }
    if (this.closed) {
      await client.end().catch(() => {});
      throw new DatabaseUnavailable(`${this.name}: the connection is closed`);
    }
    const recovered = this.cause !== null;
    this.client = client;
    this.cause = null;
    this.failures = 0;
    this.log(`${this.name}: connected to PostgreSQL${recovered ? ' again' : ''}`);
    if (recovered) this.onReconnect?.();
    return client;
  }

  /** @param {Error} err */
  failed(err) {
    const cause = describe(err);
    const delay = Math.min(this.maxDelayMs, this.minDelayMs * 2 ** this.failures) * (0.75 + Math.random() / 2);
    this.failures += 1;
    if (cause !== this.cause) {
      this.log(`${this.name}: cannot connect to PostgreSQL: ${cause}; retrying with backoff`);
    }
    this.cause = cause;
    if (!this.closed) {
      this.timer = setTimeout(() => { this.timer = null; this.connect().catch(() => {}); }, delay);
      this.timer.unref();
    }
  }

  /** @param {pg.Client} client @param {Error} err */
  lost(client, err) {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => {});
    if (this.closed) return;
    this.cause = describe(err);
    this.log(`${this.name}: lost the connection to PostgreSQL: ${this.cause}; reconnecting`);
    this.failures = 0;
    this.connect().catch(() => {});
  }

  /** The message of a DatabaseUnavailable now. */
  message() {
    return `the database is unavailable (${this.cause ?? 'not connected'}); `
      + 'the server keeps trying to reconnect: try again shortly';
  }

  /**
   * pg's query: on the current connection, or DatabaseUnavailable when there
   * is none (an attempt under way is waited for).
   * @param {string} text @param {unknown[]} [values]
   */
  async query(text, values) {
    if (this.closed) throw new DatabaseUnavailable(`${this.name}: the connection is closed`);
    let client = this.client;
    if (!client) {
      if (!this.connecting) throw new DatabaseUnavailable(this.message());
      client = await this.connect();
    }
    try {
      return await client.query(text, values);
    } catch (err) {
      if (!isConnectionError(err)) throw err;
      this.lost(client, /** @type {Error} */ (err));
      throw new DatabaseUnavailable(`the connection to the database was lost during the call (${describe(err)}); `
        + 'whether it took effect is unknown', { cause: err });
    }
  }

  /** Close the connection and stop reconnecting. */
  async end() {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => {});
  }
}

/** A one-line cause: the server's message and SQLSTATE, or the socket error. @param {any} err */
function describe(err) {
  const message = String(err?.message || err?.code || err).split('\n')[0];
  return err?.code && /^[0-9A-Z]{5}$/.test(err.code) ? `${message} (SQLSTATE ${err.code})` : message;
}
