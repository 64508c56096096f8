/*
 * stage.h — staging a record (SPEC §4), for the calls that stage as part of
 * their own work.
 */
#ifndef MEMTX_STAGE_H
#define MEMTX_STAGE_H

#include "pipeline.h"

/*
 * memtx.propose's stage into a fresh transaction (TxnBeginPending): its
 * record is admitted before it is written, and written settled (SPEC §21).
 */
typedef struct StagePending
{
	int64		epoch;			/* in: the agent's writer epoch, for t's row */
	PipelineVerdict verdict;	/* out: the record's admission */
} StagePending;

/*
 * stage's arguments in fcinfo, t loaded for call: the staged record's id (or
 * a retry's original); pending: t is fresh, the record is admitted and
 * written settled, and t's row written closed.
 */
extern int64 StageCall(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, bool *retried,
					   StagePending *pending);

/* memtx.stage, which restore calls whole; the record a restore's stage copies (0: none). */
extern PGDLLEXPORT Datum memtx_stage(PG_FUNCTION_ARGS);
extern void StageRestoring(int64 record);

#endif							/* MEMTX_STAGE_H */
