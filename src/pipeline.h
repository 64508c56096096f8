/*
 * pipeline.h — the commit pipeline (SPEC §4), for the calls that commit as
 * part of their own work.
 */
#ifndef MEMTX_PIPELINE_H
#define MEMTX_PIPELINE_H

#include "record.h"
#include "txn.h"

#include "funcapi.h"

/*
 * memtx.propose's admission of its one record before it is written (SPEC
 * §21): the four checks, and the supersession of its rivals when it passes.
 */
typedef struct PipelineVerdict
{
	MemtxReason reason;			/* MR_NONE: it passed */
	MemtxState	state;			/* committed, action_safe or quarantined */
	int32		checks;			/* for its receipt */
	char	   *superseded;
} PipelineVerdict;

extern void PipelineAdmitPending(MemtxTxn *t, MemtxRec *rec, PipelineVerdict *v);
extern void PipelineSettledPending(MemtxTxn *t, int64 id, const PipelineVerdict *v,
								   ReturnSetInfo *rsinfo);

#endif							/* MEMTX_PIPELINE_H */
