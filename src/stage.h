/*
 * stage.h — staging a record (SPEC §4), for the calls that stage as part of
 * their own work.
 */
#ifndef MEMTX_STAGE_H
#define MEMTX_STAGE_H

#include "txn.h"

/* stage's arguments in fcinfo, t loaded for call: the staged record's id (or a retry's original) */
extern int64 StageCall(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, bool *retried);

#endif							/* MEMTX_STAGE_H */
