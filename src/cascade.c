/*
 * cascade.c — retraction and typed cascade repair (SPEC §6).
 *
 * memtx.abort(tx) and memtx.revoke(record, note) share one routine.  It
 * revokes each root, logs it, then walks every transitive descendant once —
 * a recursive query over the edges' parent index whose UNION visits a
 * diamond's base once — and repairs by kind and state:
 *
 *   tentative, raw, superseded, quarantined at commit   revoked (revoked_parent)
 *   active belief                                       revoked (revoked_parent)
 *   active summary, profile, index_entry, shared_copy   quarantined (invalidated),
 *                                                       entered in the registry
 *   active tool_action                                  compensated (reversible
 *                                                       tool: obligation row) or
 *                                                       leaked; then revoked
 *   view already quarantined and registered, revoked    left alone, no log row
 *
 * A root that is itself an active tool action is repaired the same way
 * (compensated or leaked, then revoked; SPEC §16): an agent that revokes its
 * own action does not escape its compensation.
 *
 * A commit that quarantines a record with tool actions below it (actions
 * taken on tentative inputs) runs the same repair on those actions and what
 * descends from them, with the quarantined record as root_id and no root row
 * (the record's verdict is its outcome); such a commit holds the namespace
 * lock exclusive, as every cascade does.
 *
 * The walk goes on through revoked records, so nothing derived from them is
 * left tentative or active.  Repairs are applied set-wise, one statement per
 * kind of repair, and every repair and each root writes one rollback_log row;
 * cost is linear in the number of descendants and independent of store size.
 *
 * A cascade holds its namespace lock exclusive: stages, commits, acts and
 * resolutions (shared holders) wait for it or it for them, so the descendant
 * set it repairs is the complete one, and no commit can interleave with it.
 */
#include "cascade.h"
#include "events.h"
#include "locks.h"
#include "record.h"
#include "visibility.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/resowner.h"
#include "utils/array.h"
#include "utils/builtins.h"

typedef struct RepairList
{
	Datum	   *ids;
	Datum	   *kinds;
	Datum	   *actions;
	Datum	   *reasons;
	int			n;
	int			cap;
} RepairList;

static void
RepairAdd(RepairList *l, int64 id, const char *kind, const char *action, const char *reason)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 64;
		l->ids = l->ids ? repalloc(l->ids, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->kinds = l->kinds ? repalloc(l->kinds, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->actions = l->actions ? repalloc(l->actions, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->reasons = l->reasons ? repalloc(l->reasons, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
	}
	l->ids[l->n] = Int64GetDatum(id);
	l->kinds[l->n] = CStringGetTextDatum(kind);
	l->actions[l->n] = CStringGetTextDatum(action);
	l->reasons[l->n] = CStringGetTextDatum(reason);
	l->n++;
}

static Datum
CascadeTexts(Datum *texts, int n)
{
	return PointerGetDatum(construct_array(texts, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* Revoke ids (any non-terminal state) with reason; tentative ones settle now. */
static void
CascadeRevokeIds(Datum *ids, int n, const char *reason)
{
	static SPIPlanPtr unvalidate;
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID, TEXTOID};
	Datum		values[2];

	if (n == 0)
		return;
	values[0] = RecIdsDatum(ids, n);
	values[1] = CStringGetTextDatum(reason);
	/* validated is a step inside commit; it can only leave through quarantine */
	MemtxExec(MemtxPlan(&unvalidate,
						"UPDATE memtx.records SET state = 'quarantined' "
						"WHERE id = ANY ($1) AND state = 'validated'",
						1, types),
			  values, NULL, 0);
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.records SET state = 'revoked', reason = $2, "
						"verdict = CASE WHEN state = 'tentative' THEN 'revoked' ELSE verdict END, "
						"verdict_reason = CASE WHEN state = 'tentative' THEN $2 ELSE verdict_reason END, "
						"settled_xid = coalesce(settled_xid, pg_catalog.pg_current_xact_id()), "
						"settled_pos = coalesce(settled_pos, pg_catalog.nextval('memtx.clock')) "
						"WHERE id = ANY ($1) AND state <> 'revoked'",
						2, types),
			  values, NULL, 0);
}

/* Write the log rows of one root's cascade; emit them when out is given. */
static void
CascadeLog(int64 root, RepairList *l, const char *note, Tuplestorestate *out)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID};
	Datum		values[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};

	if (l->n == 0)
		return;
	values[0] = Int64GetDatum(root);
	values[1] = RecIdsDatum(l->ids, l->n);
	values[2] = CascadeTexts(l->kinds, l->n);
	values[3] = CascadeTexts(l->actions, l->n);
	values[4] = CascadeTexts(l->reasons, l->n);
	values[5] = note ? CStringGetTextDatum(note) : (Datum) 0;
	nulls[5] = note ? ' ' : 'n';
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.rollback_log (root_id, record_id, kind, action, reason, note, pos) "
						"SELECT $1, u.id, u.kind::memtx.kind, u.action, u.reason, $6, "
						"       pg_catalog.nextval('memtx.clock') "
						"FROM unnest($2, $3, $4, $5) WITH ORDINALITY AS u(id, kind, action, reason, ord) "
						"ORDER BY u.ord RETURNING *",
						6, types),
			  values, nulls, 0);
	if (out)
		for (uint64 i = 0; i < SPI_processed; i++)
			tuplestore_puttuple(out, SPI_tuptable->vals[i]);
}

/* A tool action's repair: an obligation row when its tool is reversible, then revoked. */
static void
CascadeRepairAction(RepairList *log, RepairList *comp, int64 id, bool reversible, const char *reason)
{
	if (reversible)
		RepairAdd(comp, id, "tool_action", "compensated", reason);
	RepairAdd(log, id, "tool_action", reversible ? "compensated" : "leaked", reason);
}

/*
 * Repair, by kind and state, what lies below root: every transitive
 * descendant, or (below_actions) only the tool actions among them and what
 * descends from those.  Log rows go to log; comp holds the tool actions to
 * compensate (the caller may have added root itself).
 */
static void
CascadeRepairBelow(int64 root, bool below_actions, RepairList *log, RepairList *comp)
{
	static SPIPlanPtr walk_all;
	static SPIPlanPtr walk_actions;
	static SPIPlanPtr quarantine;
	static SPIPlanPtr registry;
	static SPIPlanPtr compensate;
	static const Oid id_types[] = {INT8OID};
	static const Oid ids_types[] = {INT8ARRAYOID};
	static const Oid reg_types[] = {INT8ARRAYOID, INT8OID};
#define CASCADE_WALK_COLUMNS \
	"SELECT r.id, r.kind::text, r.state::text, rr.record_id IS NOT NULL, " \
	"       coalesce(t.reversible, false) "
#define CASCADE_WALK_JOINS \
	"JOIN memtx.records r ON r.id = d.id " \
	"LEFT JOIN memtx.revocation_registry rr ON rr.record_id = r.id " \
	"LEFT JOIN memtx.tools t ON r.kind = 'tool_action' " \
	"      AND t.name = pg_catalog.substr(r.entity, 6) " \
	"ORDER BY r.id FOR UPDATE OF r"
	RepairList	revoke = {0};
	RepairList	views = {0};
	Datum		values[2];
	SPITupleTable *desc;
	uint64		nd;

	values[0] = Int64GetDatum(root);
	if (below_actions)
		MemtxExec(MemtxPlan(&walk_actions,
							"WITH a(id) AS ("
							"  SELECT x.id FROM memtx.descendants($1) x(id) "
							"  JOIN memtx.records ra ON ra.id = x.id AND ra.kind = 'tool_action'), "
							"d(id) AS (SELECT a.id FROM a UNION SELECT y.id FROM a, memtx.descendants(a.id) y(id)) "
							CASCADE_WALK_COLUMNS "FROM d " CASCADE_WALK_JOINS,
							1, id_types),
				  values, NULL, 0);
	else
		MemtxExec(MemtxPlan(&walk_all,
							CASCADE_WALK_COLUMNS "FROM memtx.descendants($1) d(id) " CASCADE_WALK_JOINS,
							1, id_types),
				  values, NULL, 0);
	desc = SPI_tuptable;
	nd = SPI_processed;
	for (uint64 i = 0; i < nd; i++)
	{
		HeapTuple	tup = desc->vals[i];
		TupleDesc	td = desc->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
		char	   *kind = SPI_getvalue(tup, td, 2);
		MemtxState	state = MemtxStateFromName(SPI_getvalue(tup, td, 3));
		bool		registered = DatumGetBool(SPI_getbinval(tup, td, 4, &isnull));
		bool		reversible = DatumGetBool(SPI_getbinval(tup, td, 5, &isnull));
		int			k = MemtxLabelIndex(MemtxKindNames, 6, kind);

		if (state == MS_REVOKED)
			continue;
		if (state == MS_QUARANTINED && registered)
			continue;
		if (MEMTX_IS_ACTIVE(state) && KIND_IS_VIEW(k))
		{
			RepairAdd(&views, id, kind, "quarantined", "invalidated");
			RepairAdd(log, id, kind, "quarantined", "invalidated");
			continue;
		}
		if (MEMTX_IS_ACTIVE(state) && k == KIND_TOOL_ACTION)
			CascadeRepairAction(log, comp, id, reversible, "revoked_parent");
		else
			RepairAdd(log, id, kind, "revoked", "revoked_parent");
		RepairAdd(&revoke, id, kind, "revoked", "revoked_parent");
	}

	CascadeRevokeIds(revoke.ids, revoke.n, "revoked_parent");
	if (views.n > 0)
	{
		values[0] = RecIdsDatum(views.ids, views.n);
		values[1] = Int64GetDatum(root);
		MemtxExec(MemtxPlan(&quarantine,
							"UPDATE memtx.records SET state = 'quarantined', reason = 'invalidated' "
							"WHERE id = ANY ($1)",
							1, ids_types),
				  values, NULL, 0);
		MemtxExec(MemtxPlan(&registry,
							"INSERT INTO memtx.revocation_registry (record_id, root_id) "
							"SELECT unnest($1), $2 ON CONFLICT (record_id) DO NOTHING",
							2, reg_types),
				  values, NULL, 0);
	}
	if (comp->n > 0)
	{
		values[0] = RecIdsDatum(comp->ids, comp->n);
		values[1] = Int64GetDatum(root);
		MemtxExec(MemtxPlan(&compensate,
							"INSERT INTO memtx.compensations (root_id, action_id, tool, compensator, args) "
							"SELECT $2, r.id, pg_catalog.substr(r.entity, 6), t.compensator, r.value "
							"FROM memtx.records r LEFT JOIN memtx.tools t "
							"  ON t.name = pg_catalog.substr(r.entity, 6) "
							"WHERE r.id = ANY ($1) ORDER BY r.id",
							2, reg_types),
				  values, NULL, 0);
	}
#undef CASCADE_WALK_COLUMNS
#undef CASCADE_WALK_JOINS
}

int
CascadeRun(const char *ns, int64 *roots, int nroots,
		   const char *root_reason, const char *note,
		   Tuplestorestate *out)
{
	static SPIPlanPtr lock_roots;
	static const Oid ids_types[] = {INT8ARRAYOID};
	Datum	   *rootids;
	Datum		values[1];
	int			written = 0;
	SPITupleTable *tuptable;
	uint64		n;
	RepairList *rootlog;
	RepairList *rootcomp;

	LockNamespace(ns, true);

	/*
	 * Revoke every live root first, so a root below another keeps its own
	 * reason.  A root that is itself an active tool action is repaired like a
	 * descendant: compensated or leaked, then revoked.
	 */
	rootids = palloc(sizeof(Datum) * (nroots + 1));
	for (int i = 0; i < nroots; i++)
		rootids[i] = Int64GetDatum(roots[i]);
	values[0] = RecIdsDatum(rootids, nroots);
	MemtxExec(MemtxPlan(&lock_roots,
						"SELECT r.id, r.kind::text, r.kind = 'tool_action' AND memtx.is_active(r.state), "
						"       coalesce(t.reversible, false) "
						"FROM memtx.records r LEFT JOIN memtx.tools t ON r.kind = 'tool_action' "
						"      AND t.name = pg_catalog.substr(r.entity, 6) "
						"WHERE r.id = ANY ($1) AND r.state <> 'revoked' ORDER BY r.id FOR UPDATE OF r",
						1, ids_types),
			  values, NULL, 0);
	tuptable = SPI_tuptable;
	n = SPI_processed;
	rootlog = palloc0(sizeof(RepairList) * (n + 1));
	rootcomp = palloc0(sizeof(RepairList) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = tuptable->vals[i];
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, tuptable->tupdesc, 1, &isnull));

		rootids[i] = Int64GetDatum(id);
		if (DatumGetBool(SPI_getbinval(tup, tuptable->tupdesc, 3, &isnull)))
			CascadeRepairAction(&rootlog[i], &rootcomp[i], id,
								DatumGetBool(SPI_getbinval(tup, tuptable->tupdesc, 4, &isnull)),
								root_reason);
		else
			RepairAdd(&rootlog[i], id, SPI_getvalue(tup, tuptable->tupdesc, 2), "revoked", root_reason);
	}
	CascadeRevokeIds(rootids, (int) n, root_reason);

	for (uint64 r = 0; r < n; r++)
	{
		int64		root = DatumGetInt64(rootids[r]);

		CascadeRepairBelow(root, false, &rootlog[r], &rootcomp[r]);
		CascadeLog(root, &rootlog[r], note, out);
		written += rootlog[r].n;
		MemtxNotify("cascade", 0, root, root_reason, rootlog[r].n);
	}
	return written;
}

/*
 * Repair the tool actions derived from record root, which a commit has just
 * quarantined, and what descends from them, as a cascade would (SPEC §16 "Act
 * inputs"): root leaves tentative other than by committing.  The rows carry
 * root as their root; root itself gets none (its verdict is its outcome).
 * The caller holds the namespace lock exclusive.
 */
void
CascadeRepairActions(const char *ns, int64 root, const char *reason)
{
	RepairList	log = {0};
	RepairList	comp = {0};

	Assert(LockNamespaceHeld(ns, true));
	CascadeRepairBelow(root, true, &log, &comp);
	if (log.n == 0)
		return;
	CascadeLog(root, &log, NULL, NULL);
	MemtxNotify("cascade", 0, root, reason, log.n);
}

/*
 * Whether an allowed action of transaction tx derives from its tentative
 * staging: its commit may then quarantine an action's input, and the repair
 * needs the namespace lock exclusive.  Called with tx's row locked, so no
 * such action can appear before the commit takes that lock.
 */
bool
CascadeStagingHasActions(int64 tx)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(tx);
	MemtxExec(MemtxPlan(&plan,
						"SELECT 1 FROM memtx.action_log a "
						"WHERE a.tx_id = $1 AND a.allowed AND a.inputs <> '{}' "
						"  AND EXISTS (SELECT 1 FROM memtx.ancestors(a.action_id) p(id) "
						"              JOIN memtx.records r ON r.id = p.id "
						"              WHERE r.tx_id = $1 AND r.state = 'tentative') "
						"LIMIT 1",
						1, types),
			  values, NULL, 1);
	return SPI_processed > 0;
}

/*
 * memtx.revoke(record, note) → SETOF memtx.rollback_log
 */
PG_FUNCTION_INFO_V1(memtx_revoke);
Datum
memtx_revoke(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr load;
	static const Oid types[] = {INT8OID};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	Datum		values[1];
	int64		id;
	MemtxRec	rec;
	char	   *note = NULL;

	MemtxRequireArg(fcinfo, 0, "record id");
	id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
	{
		note = text_to_cstring(PG_GETARG_TEXT_PP(1));
		if (strlen(note) > 4096)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("note is too long (%zu bytes, at most 4096)", strlen(note))));
	}
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&load, "SELECT r.* FROM memtx.records r WHERE r.id = $1", 1, types),
			  values, NULL, 1);
	/* a record the caller may not read answers as one that does not exist */
	if (SPI_processed == 0)
		RecNotFound("record", id);
	RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &rec);
	if (!MemtxIsHarness(call.caller))
	{
		if (!VisReadable(call.caller, &rec))
			RecNotFound("record", id);
		if (!MemtxRoleIsMember(call.caller, rec.owner))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to revoke record %lld", (long long) id),
					 errdetail("Only its owner or a harness may revoke it.")));
	}

	CascadeRun(rec.namespace, &id, 1, "revoked", note, rsinfo->setResult);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/* Abort transaction t: revoke its tentative staging with reason, repair. */
static void
CascadeAbortTxn(MemtxTxn *t, const char *reason,
				Tuplestorestate *out)
{
	static SPIPlanPtr staged;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	int64	   *ids;
	uint64		n;

	LockNamespace(t->namespace, true);
	values[0] = Int64GetDatum(t->id);
	MemtxExec(MemtxPlan(&staged,
						"SELECT id FROM memtx.records WHERE tx_id = $1 AND state = 'tentative' ORDER BY id",
						1, types),
			  values, NULL, 0);
	n = SPI_processed;
	ids = palloc(sizeof(int64) * (n + 1));
	for (uint64 i = 0; i < n; i++)
		ids[i] = MemtxGetInt64(i, 1);
	CascadeRun(t->namespace, ids, (int) n, reason, NULL, out);
	TxnEnd(t, "aborted", reason);
	MemtxNotify(strcmp(reason, "expired") == 0 ? "expired" : "aborted",
				t->id, 0, reason, (int64) n);
}

/*
 * memtx.abort(tx) → SETOF memtx.rollback_log
 *
 * Aborting an aborted transaction returns no rows; a committed one cannot be
 * aborted (revoke its records instead).
 */
PG_FUNCTION_INFO_V1(memtx_abort);
Datum
memtx_abort(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	MemtxTxn   *t;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_ANY);
	if (TXN_ABORTED(t))
	{
		MemtxCallEnd(&call);
		return (Datum) 0;
	}
	if (!TXN_OPEN(t))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("memtx transaction %lld is %s and cannot be aborted",
						(long long) t->id, t->status),
				 errhint("Revoke its records with memtx.revoke instead.")));
	CascadeAbortTxn(t, "aborted", rsinfo->setResult);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * Expire the transactions ids[0..n) of namespace ns, which the caller holds
 * FOR UPDATE, in a subtransaction: when the namespace lock cannot be had
 * within lock_timeout (a writer idle in its SQL transaction holds it), the
 * namespace is skipped and false returned; the next run retries it.
 */
static bool
CascadeExpireNamespace(const char *ns, int64 *ids, int n, Tuplestorestate *out, TupleDesc desc)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bool		done = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		LockNamespace(ns, true);
		for (int i = 0; i < n; i++)
		{
			Datum		v = Int64GetDatum(ids[i]);
			bool		isnull = false;

			/* load without renewing: the lease is over */
			CascadeAbortTxn(TxnLoadExpired(ids[i]), "expired", NULL);
			tuplestore_putvalues(out, desc, &v, &isnull);
		}
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE)
			PG_RE_THROW();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(LOG,
				(errmsg("memtx expiry skipped namespace \"%s\": its lock is held", ns),
				 errdetail_plural("%d expired transaction waits for the next run.",
								  "%d expired transactions wait for the next run.", n, n)));
		done = false;
	}
	PG_END_TRY();
	return done;
}

/*
 * memtx.expire_transactions(namespace DEFAULT NULL) → SETOF bigint
 *
 * Aborts, with reason expired, every open transaction (of the namespace,
 * when given) whose lease ran out.  Transactions locked by a call in
 * progress are skipped (that call renews their lease), and so is every
 * namespace whose lock is not had within lock_timeout: a writer idle in its
 * SQL transaction holds up expiry of its own namespace only.
 */
PG_FUNCTION_INFO_V1(memtx_expire_transactions);
Datum
memtx_expire_transactions(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr expired;
	static const Oid types[] = {TEXTOID};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	Datum		values[1];
	char		nulls[1] = {' '};
	int64	   *ids;
	char	  **nss;
	uint64		n;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "expire transactions");
	if (PG_NARGS() > 0 && !PG_ARGISNULL(0))
		values[0] = PG_GETARG_DATUM(0);
	else
		nulls[0] = 'n';
	MemtxExec(MemtxPlan(&expired,
						"SELECT id, namespace FROM memtx.transactions "
						"WHERE status = 'open' AND lease_expires_at < pg_catalog.clock_timestamp() "
						"  AND ($1 IS NULL OR namespace = $1) "
						"ORDER BY namespace, id FOR UPDATE SKIP LOCKED",
						1, types),
			  values, nulls, 0);
	n = SPI_processed;
	ids = palloc(sizeof(int64) * (n + 1));
	nss = palloc(sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		ids[i] = MemtxGetInt64(i, 1);
		nss[i] = MemtxGetText(i, 2);
	}
	for (uint64 first = 0, next; first < n; first = next)
	{
		for (next = first + 1; next < n && strcmp(nss[next], nss[first]) == 0; next++)
			;
		(void) CascadeExpireNamespace(nss[first], ids + first, (int) (next - first),
									  rsinfo->setResult, rsinfo->setDesc);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
