/*
 * propose.c — memtx.propose (SPEC §10, §21): begin, stage and commit of one
 * record in one call.
 *
 * The call runs the three calls' checks in their order — TxnBegin's,
 * StageCall's, the commit pipeline's — in one MemtxCall, so it returns what
 * the three calls return, refuses what they refuse and takes their locks in
 * their order, but pays for one call: one switch to the extension owner,
 * one SPI connection, no PL/pgSQL.  The transaction begins as the caller,
 * at the caller's tier, in the namespace given.
 *
 * Fewer row versions (SPEC §21).  Nobody else can name the transaction
 * before the call ends, so it is open only inside the call
 * (TxnBeginPending): its record is admitted before anything is written
 * (PipelineAdmitPending: the four checks, by the record's content, and the
 * supersession of its rivals), then the transaction's row is written once,
 * already closed, and the record once, already settled — committed,
 * action_safe or quarantined, with the positions, verdict and reason the
 * commit would have set, its staging position drawn after any
 * supersession.  Its first history row is that settled state at its staging
 * position; it has no tentative one.  The receipt, the outcome rows and the
 * events are the commit's.  The lifecycle trigger guards UPDATEs, and
 * propose updates neither row: what a user can do to a record is as before.
 *
 * A proposal id makes the call a possible retry: when the id is already
 * bound (proposal.c), the stage returns the original record and writes
 * nothing, and propose returns the original's outcome (memtx.outcome, as
 * the caller) without a trace of its own transaction.  The begin and the
 * stage then run in an internal subtransaction, rolled back on a retry, so
 * a retry also releases the locks it took, as it always has; without an id
 * there is nothing to undo and no subtransaction.  An error anywhere aborts
 * the caller's statement, as with the three calls.
 */
#include "pipeline.h"
#include "stage.h"
#include "subxact.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"

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
	MemtxTxn   *t;				/* the transaction, open in this call only */
	int64		id;				/* the record, or a retry's original */
	bool		retried;		/* the proposal id was bound already */
	StagePending pending;		/* the record's admission */
} ProposeStaged;

/*
 * Begin a transaction of call's principal in ns and stage into it with
 * stage's arguments (all but the transaction id, set here): unless a retry,
 * the record is admitted and written settled, the transaction closed.
 */
static void
ProposeStage(MemtxCall *call, const char *ns, FunctionCallInfo stage, ProposeStaged *out)
{
	out->t = TxnBeginPending(call, ns, &out->pending.epoch);
	stage->args[0].value = Int64GetDatum(out->t->id);
	out->id = StageCall(stage, call, out->t, &out->retried, &out->pending);
}

/* ProposeStage's arguments, for its run in a subtransaction. */
typedef struct ProposeArgs
{
	MemtxCall  *call;
	const char *ns;
	FunctionCallInfo stage;
	ProposeStaged *out;
} ProposeArgs;

/* ProposeStage in a subtransaction: kept unless a retry. */
static bool
ProposeStageBody(void *arg)
{
	ProposeArgs *a = arg;

	ProposeStage(a->call, a->ns, a->stage, a->out);
	return !a->out->retried;
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
	ProposeStaged st;
	char	   *ns;

	MemtxRequireArg(fcinfo, PROPOSE_NAMESPACE, "namespace");
	MemtxCheckText(PG_GETARG_TEXT_PP(PROPOSE_NAMESPACE), "namespace", 256);
	ns = text_to_cstring(PG_GETARG_TEXT_PP(PROPOSE_NAMESPACE));
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	InitFunctionCallInfoData(*stage, NULL, PROPOSE_STAGE_ARGS, InvalidOid, NULL, NULL);
	for (int i = 0; i < PROPOSE_STAGE_ARGS - 1; i++)
		stage->args[i + 1] = fcinfo->args[i];
	stage->args[0].isnull = false;

	if (!PG_ARGISNULL(PROPOSE_PROPOSAL))
	{
		ProposeArgs a = {&call, ns, stage, &st};

		(void) SubxactRun(ProposeStageBody, &a, 0);
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
	PipelineSettledPending(st.t, st.id, &st.pending.verdict, rsinfo);
	MemtxCallEnd(&call);
	return (Datum) 0;
}
