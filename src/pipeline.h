/*
 * pipeline.h — the commit pipeline (SPEC §4), for the calls that commit as
 * part of their own work.
 */
#ifndef MEMTX_PIPELINE_H
#define MEMTX_PIPELINE_H

#include "txn.h"

#include "funcapi.h"

/* commit open transaction t; the outcome rows go to rsinfo, led by t's id when with_tx */
extern void PipelineCommit(MemtxTxn *t, ReturnSetInfo *rsinfo, bool with_tx);

#endif							/* MEMTX_PIPELINE_H */
