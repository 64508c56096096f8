/*
 * dag.h — values that flow down the derivation DAG over a loaded set of
 * records (dag.c).
 */
#ifndef MEMTX_DAG_H
#define MEMTX_DAG_H

#include "memtx.h"

/* No seed: a record that is no source, or that no source reaches. */
#define DAG_NONE PG_INT64_MIN

typedef struct Dag Dag;

extern Dag *DagLoad(SPITupleTable *tt, uint64 n, int idcol, int parentscol, int seedcol);
extern void DagSeedSet(Dag *dag, int64 id, int64 seed);
extern int64 DagSeed(Dag *dag, int64 id);
extern int64 DagReach(Dag *dag, int64 id);

#endif							/* MEMTX_DAG_H */
