/*
 * proposal.c — exact-head proposals and one disposition per proposal (SPEC §10).
 *
 * Expected head.  A record may name the predecessor its proposer saw: 0 for
 * typed absence, or the id of a record on the same slot.  Stage checks only
 * that the id names such a record the transaction's agent may read, with one
 * error (22023) for "no such record", "another slot" and "not readable", so
 * the check reveals nothing.  Whether it is still the head is decided at
 * commit, under the slot's lock, as the first rule of step 3d (conflict.c):
 * the head set is every active record on the slot whose validity overlaps the
 * candidate's, whatever its value; it must be empty for 0 and exactly the
 * named record otherwise.  The slot lock makes the check exact: of two
 * commits racing on one head the second sees the first's record in the head
 * set and gets stale_head.  resolve re-checks it when accepting.
 *
 * Proposal ids.  An id is its agent's (SPEC §17): bound, forever, to the
 * first record staged under it in its namespace by a transaction of that
 * agent (the record's proposer; a partial unique index on (namespace,
 * proposer, proposal) keeps that true whatever the code does), and another
 * agent's use of the same string is another proposal, so no role can squat
 * the ids of another.  Stage takes the proposal lock (locks.c, level 3) before it looks
 * the id up, so a second stage under one id waits for the first's SQL
 * transaction to end and then, in a fresh READ COMMITTED query, sees its
 * record (a retry) or nothing (the first rolled back: it binds the id).  A
 * retry by the same agent with the same content — what the record stores once
 * defaults apply — returns the original id and writes nothing; anything else
 * is 23505.  A failed call writes nothing, so it binds nothing.
 */
#include "proposal.h"
#include "catalog.h"
#include "permissions.h"
#include "locks.h"
#include "visibility.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/*
 * Check an expected head at stage time: 0, or a record on t's slot
 * (entity, attribute) that t's agent may read.
 */
void
ProposalCheckHead(MemtxTxn *t, text *entity, text *attribute, int64 head)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[4];
	MemtxRec	rec;

	if (head == 0)
		return;
	if (head > 0)
	{
		values[0] = Int64GetDatum(head);
		values[1] = CStringGetTextDatum(t->namespace);
		values[2] = PointerGetDatum(entity);
		values[3] = PointerGetDatum(attribute);
		MemtxExec(MemtxPlan(&plan,
							"SELECT r.* FROM memtx.records r WHERE r.id = $1 "
							"AND r.namespace = $2 AND r.entity = $3 AND r.attribute = $4",
							4, types),
				  values, NULL, 1);
		if (SPI_processed == 1)
		{
			RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &rec);
			if (VisReadable(t->agent_oid, &rec))
				return;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("expected_head %lld is not a record of this slot", (long long) head),
			 errdetail("expected_head is 0 (no active record) or the id of a record on the same namespace, entity and attribute that the transaction's agent may read.")));
}

/*
 * Whether the head set of record id (memtx.head_set: active records on its
 * slot whose validity overlaps its own) is what its expected head says.  The caller
 * holds the slot's lock, so the answer stays true until it commits.
 */
bool
ProposalHeadMatches(MemtxRec *rec)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	static SPIPlanPtr pending;
	static const Oid pending_types[] = {TEXTOID, TEXTOID, TEXTOID, TSTZRANGEOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	Assert(rec->expected_head >= 0);
	Assert(LockSlotHeld(rec->namespace, rec->entity, rec->attribute));
	if (rec->pending)
	{
		/* not in the store yet (memtx.propose): by its content */
		values[0] = CStringGetTextDatum(rec->namespace);
		values[1] = CStringGetTextDatum(rec->entity);
		values[2] = CStringGetTextDatum(rec->attribute);
		values[3] = rec->valid;
		nulls[3] = rec->valid == (Datum) 0 ? 'n' : ' ';
		MemtxExec(MemtxPlan(&pending,
							"SELECT count(*), min(h.id) FROM memtx.head_set($1, $2, $3, $4) h",
							4, pending_types),
				  values, nulls, 1);
	}
	else
	{
		values[0] = Int64GetDatum(rec->id);
		MemtxExec(MemtxPlan(&plan,
							"SELECT count(*), min(h.id) FROM memtx.records c "
							"CROSS JOIN LATERAL memtx.head_set(c.namespace, c.entity, c.attribute, c.valid) h "
							"WHERE c.id = $1 AND h.id <> c.id",
							1, types),
				  values, NULL, 1);
	}
	if (rec->expected_head == 0)
		return MemtxGetInt64(0, 1) == 0;
	return MemtxGetInt64(0, 1) == 1 && MemtxGetInt64(0, 2) == rec->expected_head;
}

/*
 * The record bound to proposal of t's agent in t's namespace, when this
 * stage is a retry of it: same content (c, after defaults).  Returns 0 when
 * the id is free; any other use of a bound id is 23505.  Takes the proposal
 * lock.
 */
int64
ProposalFindRetry(MemtxCall *call, MemtxTxn *t, const char *proposal, ProposalContent *c)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {
		TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, FLOAT8OID,
		TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TSTZRANGEOID, TIMESTAMPTZOID, INT8OID,
		INT8ARRAYOID, TEXTOID
	};
	Datum		values[16];
	char		nulls[16];
	int64		original;
	MemtxRec	rec;
	bool		readable;

	LockProposal(t->namespace, t->agent, proposal);
	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(t->namespace);
	values[1] = CStringGetTextDatum(proposal);
	values[2] = c->entity;
	values[3] = c->attribute;
	values[4] = c->value;
	values[5] = CStringGetTextDatum(MemtxKindNames[c->kind]);
	values[6] = c->source;
	nulls[6] = c->source_null ? 'n' : ' ';
	values[7] = Float8GetDatum(c->confidence);
	values[8] = CStringGetTextDatum(MemtxScopeNames[c->scope]);
	values[9] = PointerGetDatum(c->readers);
	values[10] = PointerGetDatum(c->writers);
	values[11] = c->valid;
	nulls[11] = c->valid_null ? 'n' : ' ';
	values[12] = c->has_observed ? TimestampTzGetDatum(c->observed_at) : (Datum) 0;
	nulls[12] = c->has_observed ? ' ' : 'n';
	values[13] = Int64GetDatum(c->expected_head);
	nulls[13] = c->expected_head < 0 ? 'n' : ' ';
	values[14] = PointerGetDatum(c->parents);
	values[15] = CStringGetTextDatum(t->agent);
	/*
	 * Sets compare as sorted distinct arrays (an empty one is NULL on both
	 * sides); an erased record (SPEC §13) matches no content.
	 */
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.*, "
						"  r.entity = $3 AND r.attribute = $4 AND r.value::text = $5::text "
						"  AND r.kind = $6::memtx.kind AND r.source IS NOT DISTINCT FROM $7 "
						"  AND r.confidence = $8 AND r.scope = $9::memtx.scope "
						"  AND (SELECT array_agg(DISTINCT v ORDER BY v) FROM unnest(r.readers) v) "
						"      IS NOT DISTINCT FROM (SELECT array_agg(DISTINCT v ORDER BY v) FROM unnest($10) v) "
						"  AND (SELECT array_agg(DISTINCT v ORDER BY v) FROM unnest(r.writers) v) "
						"      IS NOT DISTINCT FROM (SELECT array_agg(DISTINCT v ORDER BY v) FROM unnest($11) v) "
						"  AND r.valid = coalesce($12, '(,)'::pg_catalog.tstzrange) "
						"  AND r.observed_at IS NOT DISTINCT FROM $13 "
						"  AND r.expected_head IS NOT DISTINCT FROM $14 "
						"  AND ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = r.id ORDER BY e.parent) = $15 "
						"  AND pg_catalog.to_jsonb(r) ->> 'erased_at' IS NULL AS memtx_same_content "
						"FROM memtx.records r "
						"WHERE r.namespace = $1 AND r.proposer = $16 AND r.proposal = $2",
						16, types),
			  values, nulls, 1);
	if (SPI_processed == 0)
		return 0;
	RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &rec);
	original = rec.id;
	if (MemtxGetBool(0, SPI_fnumber(SPI_tuptable->tupdesc, "memtx_same_content")))
		return original;
	/* the original is named only to a caller who may read it (SPEC §16) */
	readable = VisReadable(call->caller, &rec) || VisReadable(t->agent_oid, &rec);
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("proposal \"%s\" is already bound", proposal),
			 readable
			 ? errdetail("It is bound to record %lld, staged with other content.",
						 (long long) original)
			 : errdetail("It is bound to a record with other content."),
			 errhint("A retry repeats the original call exactly; a new proposal takes a new id.")));
	pg_unreachable();
}

/*
 * memtx.outcome(proposal, namespace, agent) → (record_id, tx_id, state,
 * reason, tx_status)
 *
 * The disposition of agent's proposal (the calling role's; a harness may
 * name another agent), for a reply that got lost; no row when the id is
 * unknown or the caller may not read the record.  A namespace other than
 * "default" answers its members only.  Writes nothing.
 */
PG_FUNCTION_INFO_V1(memtx_outcome);
Datum
memtx_outcome(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID};
	MemtxCall	call;
	Datum		values[3];
	MemtxRec	rec;

	MemtxRequireArg(fcinfo, 0, "proposal");
	MemtxRequireArg(fcinfo, 1, "namespace");
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	MemtxRequireNamespaceReader(&call, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = CStringGetTextDatum(call.caller_name);
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2) &&
		strcmp(text_to_cstring(PG_GETARG_TEXT_PP(2)), call.caller_name) != 0)
	{
		MemtxRequireHarness(&call, "ask about another agent's proposal");
		values[2] = PG_GETARG_DATUM(2);
	}
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.*, x.status::text AS memtx_tx_status "
						"FROM memtx.records r JOIN memtx.transactions x ON x.id = r.tx_id "
						"WHERE r.namespace = $2 AND r.proposer = $3 AND r.proposal = $1",
						3, types),
			  values, NULL, 1);
	if (SPI_processed == 1)
	{
		RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, &rec);
		if (VisReadable(call.caller, &rec))
		{
			Datum		out[5];
			bool		nulls[5] = {false, false, false, false, false};
			int			reasoncol = SPI_fnumber(SPI_tuptable->tupdesc, "reason");
			int			statecol = SPI_fnumber(SPI_tuptable->tupdesc, "state");
			int			statuscol = SPI_fnumber(SPI_tuptable->tupdesc, "memtx_tx_status");

			out[0] = Int64GetDatum(rec.id);
			out[1] = Int64GetDatum(rec.tx_id);
			out[2] = MemtxGet(0, statecol, &nulls[2]);
			out[3] = MemtxGet(0, reasoncol, &nulls[3]);
			out[4] = MemtxGet(0, statuscol, &nulls[4]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
		}
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
