/*
 * receipt.c — receipts of terminal dispositions and their hash chain (SPEC §11).
 *
 * Appending.  The call that makes a terminal disposition appends its receipt
 * in the same SQL transaction: one per record the pipeline settles (commit,
 * propose) or resolve accepts, one per act decision the action log records,
 * one per retraction (an aborted transaction; a root revoked by revoke or a
 * rejecting resolve; an erased record), one per namespace a fence reaches.
 * The row carries the disposition, a body of ids and positions — never a
 * value: a commit receipt keeps the salted digest of the record's value
 * (memtx.value_salted_digest), whose salt memtx.erase deletes — and
 * `appended`, drawn from a sequence when the row is written.  seq,
 * prev_hash and hash stay NULL.  Appending takes no lock: two commits on
 * unrelated slots of one namespace append side by side.
 *
 * Chaining.  memtx.chain_receipts (the worker every naptime; verify_receipts
 * before it verifies) takes the namespace's row of memtx.receipt_heads FOR
 * UPDATE — chainers of one namespace serialize there, and nothing else
 * waits on it — and then, with a fresh snapshot (READ COMMITTED), gives the
 * pending receipts it sees consecutive seq after the head's, completes each
 * body with the row's columns (memtx.receipt_columns), and sets
 * hash = sha256(prev_hash || body::text), the first receipt of a namespace
 * linked to 32 zero bytes.
 *
 * Why this is durability order.  If SQL transaction A committed before B
 * began, A drew its `appended` before B did, and any snapshot that sees B
 * sees A.  So a chaining pass that chains B chains A in the same pass or
 * chained it earlier, and within a pass `appended` puts A first.  Receipts
 * of transactions still in progress are invisible to the pass and chained
 * by a later one; a transaction that rolls back leaves neither a receipt
 * nor a gap.  Within one call, receipts are appended in the call's order
 * (staging order at commit; a fence's aborts before its fence receipts).
 *
 * What a receipt says of records (SPEC §17, receipts anchor states).  A
 * record's state is a function of the receipts that name it, so every
 * receipt lists each record whose state its call set: a commit receipt its
 * record (the disposition), `superseded` (the rivals its commit superseded)
 * and, since 0.3.0, `repaired` and `quarantined` (what the repair of its
 * quarantine did to the tool actions below the record and what descends
 * from them: revoked, but the views in `quarantined`, read back from the
 * rollback log the repair just wrote); a retract receipt its `repaired`
 * (root included) and, since 0.3.0, `quarantined` (the views among them the
 * cascade quarantined instead of revoking, read back from the records it
 * just repaired); an allowed act's receipt the tool action it recorded.  A
 * receipt of record subject whose `repaired` does not list it retracts a
 * record revoked already (an erasure of a revoked record).  Every path that
 * moves a state goes through one of these: commit and propose, resolve
 * (accepting: a commit receipt; rejecting: a retract), revoke, erase, abort,
 * expiry and fence (a retract of the transaction), act; quarantine of views
 * by a cascade is in its retract receipt, supersession in the superseding
 * commit's.  Nothing else changes a state (validated is transient inside
 * commit).
 *
 * Verifying.  memtx.verify_receipts chains what is pending, then reports,
 * per namespace, the lowest seq that memtx.receipt_problems (one SQL
 * definition, which check_invariants uses too) finds wrong: in the chain,
 * and in the record states it anchors.
 */
#include "fault.h"
#include "catalog.h"
#include "permissions.h"
#include "call.h"
#include "receipt.h"
#include "record.h"

#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"

/*
 * Receipts of the records ids[0..n) of namespace ns settled by this call, in that order:
 * checks[i] checks passed, superseded[i] the ids it superseded as an array
 * literal.  With from_verdict the disposition is the pipeline's stored
 * verdict (commit, propose), and a quarantined record's receipt lists what
 * the repair of its quarantine did (its rollback log rows); else the
 * disposition is the record's state (resolve accepting).
 */
void
ReceiptCommits(const char *ns, int64 *ids, int32 *checks, char **superseded, int n, bool from_verdict)
{
	static SPIPlanPtr salt;
	static SPIPlanPtr append;
	static const Oid types[] = {INT8ARRAYOID, INT4ARRAYOID, TEXTARRAYOID, BOOLOID};
	static const Oid salt_types[] = {INT8ARRAYOID, TEXTOID};
	Datum		salt_values[2];
	Datum	   *idd;
	Datum	   *chd;
	Datum	   *sud;
	Datum		values[4];

	if (n == 0)
		return;
	idd = palloc(sizeof(Datum) * n);
	chd = palloc(sizeof(Datum) * n);
	sud = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		idd[i] = Int64GetDatum(ids[i]);
		chd[i] = Int32GetDatum(checks[i]);
		sud[i] = CStringGetTextDatum(superseded[i]);
	}
	values[0] = RecIdsDatum(idd, n);
	values[1] = PointerGetDatum(construct_array(chd, n, INT4OID, 4, true, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(sud, n, TEXTOID, -1, false, TYPALIGN_INT));
	values[3] = BoolGetDatum(from_verdict);

	/* a record accepted by resolve has its salt from its quarantine already */
	salt_values[0] = values[0];
	salt_values[1] = CStringGetTextDatum(ns);
	MemtxExec(MemtxPlan(&salt,
						"INSERT INTO memtx.record_salts (record_id, namespace, salt) "
						"SELECT u.id, $2, pg_catalog.uuid_send(pg_catalog.gen_random_uuid()) "
						"FROM unnest($1) AS u(id) ON CONFLICT (record_id, namespace) DO NOTHING",
						2, salt_types),
			  salt_values, NULL, 0);
	MemtxExec(MemtxPlan(&append,
						"INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at) "
						"SELECT r.namespace, 'commit', r.id, "
						"       CASE WHEN $4 THEN r.verdict ELSE r.state END::text, "
						"       CASE WHEN $4 THEN r.verdict_reason ELSE r.reason END, "
						"       pg_catalog.jsonb_build_object('subject_is', 'record', 'tx', r.tx_id, "
						"         'record', r.id, 'record_kind', r.kind, "
						"         'value_digest', memtx.value_salted_digest(s.salt, r.value), "
						"         'staged_pos', r.staged_pos, 'settled_pos', r.settled_pos, "
						"         'committed_seq', r.committed_seq, 'expected_head', r.expected_head, "
						"         'checks_passed', u.checks, 'superseded', u.sup::bigint[], "
						"         'resolved', NOT $4, "
						"         'repaired', CASE WHEN $4 AND r.verdict = 'quarantined' THEN ARRAY("
						"             SELECT l.record_id FROM memtx.rollback_log l "
						"             WHERE l.root_id = r.id AND l.namespace = r.namespace ORDER BY l.id) "
						"           ELSE '{}'::bigint[] END, "
						"         'quarantined', CASE WHEN $4 AND r.verdict = 'quarantined' THEN ARRAY("
						"             SELECT l.record_id FROM memtx.rollback_log l "
						"             WHERE l.root_id = r.id AND l.namespace = r.namespace "
						"               AND l.action = 'quarantined' ORDER BY l.id) "
						"           ELSE '{}'::bigint[] END), "
						"       memtx.now() "
						"FROM unnest($1, $2, $3) WITH ORDINALITY AS u(id, checks, sup, ord) "
						"JOIN memtx.records r ON r.id = u.id "
						"JOIN memtx.record_salts s ON s.record_id = r.id ORDER BY u.ord",
						4, types),
			  values, NULL, 0);
}

/* The receipt of the act decision logged as action log row log_id. */
void
ReceiptAct(int64 log_id)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(log_id)};

	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at) "
						"SELECT a.namespace, 'act', a.tx_id, "
						"       CASE WHEN a.allowed THEN 'allowed' ELSE 'blocked' END, a.reason, "
						"       pg_catalog.jsonb_build_object('subject_is', 'transaction', 'tx', a.tx_id, "
						"         'log', a.id, 'tool', a.tool, 'reversible', a.reversible, "
						"         'inputs', a.inputs, 'effect_key', a.effect_key, 'action', a.action_id, "
						"         'blockers', a.blockers, 'gate_pos', a.gate_pos), "
						"       memtx.now() "
						"FROM memtx.action_log a WHERE a.id = $1",
						1, types),
			  values, NULL, 0);
}

/*
 * The receipt of a retraction: of transaction subject (of_tx: an abort,
 * expiry or fence) or of root record subject (revoke, rejecting resolve,
 * erase), with the ids the repair logged and, among them, the views it
 * quarantined.
 */
void
ReceiptRetract(const char *ns, int64 subject, bool of_tx, MemtxReason reason,
			   Datum *repaired, int nrepaired)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, INT8OID, TEXTOID, TEXTOID, INT8ARRAYOID};
	Datum		values[5];

	values[0] = CStringGetTextDatum(ns);
	values[1] = Int64GetDatum(subject);
	values[2] = CStringGetTextDatum(MemtxReasonName(reason));
	values[3] = CStringGetTextDatum(of_tx ? "transaction" : "record");
	values[4] = RecIdsDatum(repaired, nrepaired);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at) "
						"VALUES ($1, 'retract', $2, 'retracted', $3, "
						"        pg_catalog.jsonb_build_object('subject_is', $4, "
						"          CASE $4 WHEN 'transaction' THEN 'tx' ELSE 'record' END, $2, "
						"          'repaired', $5, "
						"          'quarantined', ARRAY(SELECT x.id FROM memtx.records x "
						"                               WHERE x.id = ANY ($5) AND x.state = 'quarantined' "
						"                               ORDER BY x.id)), "
						"        memtx.now())",
						5, types),
			  values, NULL, 0);
}

/*
 * The receipts of role's fence to epoch: one in each namespace where the
 * role has a transaction opened under an older epoch, in namespace order.
 */
void
ReceiptFence(const char *role, int64 epoch)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, INT8OID};
	Datum		values[2];

	values[0] = CStringGetTextDatum(role);
	values[1] = Int64GetDatum(epoch);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.receipts (namespace, kind, subject, disposition, reason, body, at) "
						"SELECT t.namespace, 'fence', $2, 'fenced', NULL, "
						"       pg_catalog.jsonb_build_object('subject_is', 'epoch', 'role', $1::text, "
						"         'epoch', $2, 'pos', w.pos), "
						"       memtx.now() "
						"FROM (SELECT DISTINCT x.namespace FROM memtx.transactions x "
						"      WHERE x.agent = $1 AND x.epoch < $2) t "
						"JOIN memtx.writer_epochs w ON w.role_name = $1 AND w.epoch = $2 "
						"ORDER BY t.namespace",
						2, types),
			  values, NULL, 0);
}

/* Erasure: the record's value digest can no longer be recomputed or linked. */
void
ReceiptForgetSalt(int64 record)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(record)};

	MemtxExec(MemtxPlan(&plan, "DELETE FROM memtx.record_salts WHERE record_id = $1", 1, types),
			  values, NULL, 0);
}

/* sha256(prev || body) into out. */
static void
ReceiptHash(const uint8 *prev, const char *body, size_t len, uint8 *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, prev, PG_SHA256_DIGEST_LENGTH) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) body, len) < 0 ||
		pg_cryptohash_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute a SHA-256 hash: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}

static Datum
ReceiptBytea(const uint8 *hash)
{
	bytea	   *b = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	SET_VARSIZE(b, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	memcpy(VARDATA(b), hash, PG_SHA256_DIGEST_LENGTH);
	return PointerGetDatum(b);
}

/* Chain the pending receipts of namespace ns that this snapshot sees; returns how many. */
static int64
ReceiptChainNamespace(const char *ns)
{
	static SPIPlanPtr head_insert;
	static SPIPlanPtr head_lock;
	static SPIPlanPtr pending;
	static SPIPlanPtr fill;
	static SPIPlanPtr head_move;
	static const Oid types[] = {TEXTOID, INT8OID, INT8ARRAYOID, TEXTARRAYOID, BYTEAARRAYOID, BYTEAARRAYOID};
	Datum		values[6];
	int64		seq;
	uint8		prev[PG_SHA256_DIGEST_LENGTH];
	bool		isnull;
	uint64		n;
	Datum	   *appended;
	Datum	   *bodies;
	Datum	   *prevs;
	Datum	   *hashes;

	values[0] = CStringGetTextDatum(ns);
	MemtxExec(MemtxPlan(&head_lock,
						"SELECT seq, hash FROM memtx.receipt_heads WHERE namespace = $1 FOR UPDATE",
						1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
	{
		/* a namespace's first chaining: its head starts at 32 zero bytes */
		MemtxExec(MemtxPlan(&head_insert,
							"INSERT INTO memtx.receipt_heads (namespace, seq, hash) "
							"SELECT $1, 0, pg_catalog.decode(pg_catalog.repeat('00', 32), 'hex') "
							"WHERE EXISTS (SELECT FROM memtx.receipts WHERE namespace = $1 AND seq IS NULL) "
							"ON CONFLICT (namespace) DO NOTHING",
							1, types),
				  values, NULL, 0);
		MemtxExec(head_lock, values, NULL, 1);
		if (SPI_processed == 0)
			return 0;
	}
	seq = MemtxGetInt64(0, 1);
	{
		bytea	   *h = DatumGetByteaPP(MemtxGet(0, 2, &isnull));

		if (VARSIZE_ANY_EXHDR(h) != PG_SHA256_DIGEST_LENGTH)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the receipt chain head of a namespace is not a SHA-256 hash")));
		memcpy(prev, VARDATA_ANY(h), PG_SHA256_DIGEST_LENGTH);
	}

	/* a fresh snapshot: what committed before the head lock was granted */
	values[1] = Int64GetDatum(seq);
	MemtxExec(MemtxPlan(&pending,
						"SELECT r.appended, (r.body || memtx.receipt_columns(r.namespace, "
						"         $2 + pg_catalog.row_number() OVER (ORDER BY r.appended), "
						"         r.kind, r.subject, r.disposition, r.reason, r.at))::text "
						"FROM memtx.receipts r WHERE r.namespace = $1 AND r.seq IS NULL "
						"ORDER BY r.appended",
						2, types),
			  values, NULL, 0);
	n = SPI_processed;
	if (n == 0)
		return 0;
	appended = palloc(sizeof(Datum) * n);
	bodies = palloc(sizeof(Datum) * n);
	prevs = palloc(sizeof(Datum) * n);
	hashes = palloc(sizeof(Datum) * n);
	for (uint64 i = 0; i < n; i++)
	{
		char	   *body = MemtxGetText(i, 2);
		char	   *utf8 = pg_server_to_any(body, strlen(body), PG_UTF8);
		uint8		hash[PG_SHA256_DIGEST_LENGTH];

		appended[i] = Int64GetDatum(MemtxGetInt64(i, 1));
		bodies[i] = CStringGetTextDatum(body);
		/* hashed as convert_to(body::text, 'UTF8'), whatever the database encoding */
		ReceiptHash(prev, utf8, strlen(utf8), hash);
		prevs[i] = ReceiptBytea(prev);
		hashes[i] = ReceiptBytea(hash);
		memcpy(prev, hash, PG_SHA256_DIGEST_LENGTH);
	}
	values[2] = RecIdsDatum(appended, (int) n);
	values[3] = PointerGetDatum(construct_array(bodies, (int) n, TEXTOID, -1, false, TYPALIGN_INT));
	values[4] = PointerGetDatum(construct_array(prevs, (int) n, BYTEAOID, -1, false, TYPALIGN_INT));
	values[5] = PointerGetDatum(construct_array(hashes, (int) n, BYTEAOID, -1, false, TYPALIGN_INT));
	MemtxExec(MemtxPlan(&fill,
						"UPDATE memtx.receipts r SET seq = $2 + u.ord, body = u.body::jsonb, "
						"       prev_hash = u.prev, hash = u.hash "
						"FROM unnest($3, $4, $5, $6) WITH ORDINALITY AS u(appended, body, prev, hash, ord) "
						"WHERE r.namespace = $1 AND r.appended = u.appended",
						6, types),
			  values, NULL, 0);
	if (SPI_processed != n)
		elog(ERROR, "chained %llu receipts of %llu", (unsigned long long) SPI_processed,
			 (unsigned long long) n);
	FaultPoint("chain:filled");
	values[1] = Int64GetDatum(seq + (int64) n);
	values[2] = hashes[n - 1];
	MemtxExec(MemtxPlan(&head_move,
						"UPDATE memtx.receipt_heads SET seq = $2, hash = $3 WHERE namespace = $1",
						3, (Oid[]) {TEXTOID, INT8OID, BYTEAOID}),
			  values, NULL, 0);
	return (int64) n;
}

/*
 * The namespaces to chain or verify: ns alone when given, else every one
 * with receipts (or a chain head), in name order.
 */
static char **
ReceiptNamespaces(FunctionCallInfo fcinfo, int *n)
{
	static SPIPlanPtr plan;
	char	  **out;

	if (!PG_ARGISNULL(0))
	{
		out = palloc(sizeof(char *));
		out[0] = text_to_cstring(PG_GETARG_TEXT_PP(0));
		*n = 1;
		return out;
	}
	MemtxExec(MemtxPlan(&plan,
						"SELECT namespace FROM memtx.receipt_heads "
						"UNION SELECT DISTINCT namespace FROM memtx.receipts WHERE seq IS NULL "
						"ORDER BY 1",
						0, NULL),
			  NULL, NULL, 0);
	*n = (int) SPI_processed;
	out = palloc(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
		out[i] = MemtxGetText(i, 1);
	return out;
}

/* Chain every pending receipt of the namespaces; returns how many. */
static int64
ReceiptChainAll(char **nss, int n)
{
	int64		total = 0;

	for (int i = 0; i < n; i++)
		total += ReceiptChainNamespace(nss[i]);
	return total;
}

/*
 * memtx.chain_receipts(namespace) → bigint
 */
PG_FUNCTION_INFO_V1(memtx_chain_receipts);
Datum
memtx_chain_receipts(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	char	  **nss;
	int			n;
	int64		total;

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "chain receipts");
	nss = ReceiptNamespaces(fcinfo, &n);
	total = ReceiptChainAll(nss, n);
	MemtxCallEnd(&call);
	PG_RETURN_INT64(total);
}

/*
 * memtx.verify_receipts(namespace) → SETOF (namespace, checked, first_bad_seq, detail)
 */
PG_FUNCTION_INFO_V1(memtx_verify_receipts);
Datum
memtx_verify_receipts(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr count;
	static SPIPlanPtr problems;
	static const Oid types[] = {TEXTOID};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	char	  **nss;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "verify receipts");
	nss = ReceiptNamespaces(fcinfo, &n);
	(void) ReceiptChainAll(nss, n);
	for (int i = 0; i < n; i++)
	{
		Datum		values[1] = {CStringGetTextDatum(nss[i])};
		Datum		out[4];
		bool		nulls[4] = {false, false, false, false};

		MemtxExec(MemtxPlan(&count,
							"SELECT pg_catalog.count(*) FROM memtx.receipts "
							"WHERE namespace = $1 AND seq IS NOT NULL",
							1, types),
				  values, NULL, 0);
		out[0] = values[0];
		out[1] = Int64GetDatum(MemtxGetInt64(0, 1));
		MemtxExec(MemtxPlan(&problems,
							"SELECT p.seq, p.detail FROM memtx.receipt_problems($1) p ORDER BY p.seq, p.detail LIMIT 1",
							1, types),
				  values, NULL, 0);
		if (SPI_processed > 0)
		{
			out[2] = MemtxGet(0, 1, &nulls[2]);
			out[3] = MemtxGet(0, 2, &nulls[3]);
		}
		else
			nulls[2] = nulls[3] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
