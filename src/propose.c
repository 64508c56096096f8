/*
 * propose.c — memtx.propose (SPEC §10): begin, stage and commit of one
 * record in one call.
 *
 * The call runs the three calls' own code — TxnBegin, StageCall,
 * PipelineCommit — in one MemtxCall, so it returns what the three calls
 * return and takes their locks in their order, but pays for one call: one
 * switch to the extension owner, one SPI connection, one transaction load
 * (the stage's, kept for the commit: the row stays locked), and no
 * PL/pgSQL.  The transaction begins as the caller, at the caller's tier, in
 * the namespace given.
 *
 * A proposal id makes the call a possible retry: when the id is already
 * bound (proposal.c), the stage returns the original record and writes
 * nothing, and propose returns the original's outcome (memtx.outcome, as
 * the caller) without a trace of its own transaction.  So with a proposal id
 * the begin and the stage run in an internal subtransaction, rolled back on
 * a retry; without one there is nothing to undo and no subtransaction.  An
 * error anywhere aborts the caller's statement, as with the three calls.
 */
#include "pipeline.h"
#include "stage.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/resowner.h"

/* propose's arguments: stage's after tx, then the namespace */
#define PROPOSE_PROPOSAL 13
#define PROPOSE_NAMESPACE 14
#define PROPOSE_STAGE_ARGS 15

/*
 * A retry: the outcome of the original record, as memtx.outcome shows it to
 * the caller (not to the extension owner), into rsinfo's tuplestore.
 */
static void
ProposeEmitRetry(ReturnSetInfo *rsinfo, Datum proposal, Datum ns, int64 original)
{
	static const Oid types[] = {TEXTOID, TEXTOID, INT8OID};
	Datum		values[3];

	values[0] = proposal;
	values[1] = ns;
	values[2] = Int64GetDatum(original);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT o.tx_id, o.record_id, o.state, o.reason "
							  "FROM memtx.outcome($1, $2) o WHERE o.record_id = $3",
							  3, (Oid *) types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "memtx.outcome failed");
	for (uint64 i = 0; i < SPI_processed; i++)
		tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
	SPI_finish();
}

/* What the begin and the stage of a proposal left. */
typedef struct ProposeStaged
{
	MemtxTxn   *t;				/* the transaction, loaded and locked */
	int64		id;				/* the record, or a retry's original */
	bool		retried;		/* the proposal id was bound already */
} ProposeStaged;

/*
 * Begin a transaction of call's principal in ns and stage into it with
 * stage's arguments (all but the transaction id, set here).
 */
static void
ProposeStage(MemtxCall *call, const char *ns, FunctionCallInfo stage, ProposeStaged *out)
{
	int64		tx = TxnBegin(call, call->caller_name, false, -1, -1, ns);

	out->t = TxnLoad(call, tx, TXN_NEED_OPEN);
	stage->args[0].value = Int64GetDatum(tx);
	out->id = StageCall(stage, call, out->t, &out->retried);
}

/*
 * memtx.propose(entity, attribute, value, kind, source, confidence,
 *               derived_from, scope, readers, writers, valid, observed_at,
 *               expected_head, proposal, namespace)
 *   → SETOF (tx_id, record_id, state, reason)
 */
PG_FUNCTION_INFO_V1(memtx_propose);
Datum
memtx_propose(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LOCAL_FCINFO(stage, PROPOSE_STAGE_ARGS);
	MemtxCall	call;
	MemoryContext cxt;
	ResourceOwner owner = CurrentResourceOwner;
	ProposeStaged st;
	char	   *ns;

	MemtxRequireArg(fcinfo, PROPOSE_NAMESPACE, "namespace");
	MemtxCheckText(PG_GETARG_TEXT_PP(PROPOSE_NAMESPACE), "namespace", 256);
	ns = text_to_cstring(PG_GETARG_TEXT_PP(PROPOSE_NAMESPACE));
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	cxt = CurrentMemoryContext;
	InitFunctionCallInfoData(*stage, NULL, PROPOSE_STAGE_ARGS, InvalidOid, NULL, NULL);
	for (int i = 0; i < PROPOSE_STAGE_ARGS - 1; i++)
		stage->args[i + 1] = fcinfo->args[i];
	stage->args[0].isnull = false;

	if (!PG_ARGISNULL(PROPOSE_PROPOSAL))
	{
		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			ProposeStage(&call, ns, stage, &st);
		}
		PG_CATCH();
		{
			ErrorData  *e;

			/* leave the subtransaction, so the caller's handlers see theirs */
			MemoryContextSwitchTo(cxt);
			e = CopyErrorData();
			FlushErrorState();
			RollbackAndReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(cxt);
			CurrentResourceOwner = owner;
			ReThrowError(e);
		}
		PG_END_TRY();
		if (st.retried)
			RollbackAndReleaseCurrentSubTransaction();
		else
			ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	else
		ProposeStage(&call, ns, stage, &st);

	if (st.retried)
	{
		MemtxCallEnd(&call);
		ProposeEmitRetry(rsinfo, PG_GETARG_DATUM(PROPOSE_PROPOSAL),
						 PG_GETARG_DATUM(PROPOSE_NAMESPACE), st.id);
		return (Datum) 0;
	}
	PipelineCommit(st.t, rsinfo, true);
	MemtxCallEnd(&call);
	return (Datum) 0;
}
