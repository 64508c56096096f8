/*
 * dag.h — values that flow down the derivation DAG over a loaded set of
 * records (dag.c).
 */
#ifndef MEMTX_DAG_H
#define MEMTX_DAG_H

#include "memtx.h"
#include "catalog.h"

/* No seed: a record that is no source, or that no source reaches. */
#define DAG_NONE PG_INT64_MIN

typedef struct Dag Dag;

extern Dag *DagLoad(SPITupleTable *tt, uint64 n, int idcol, int parentscol, int seedcol);

/*
 * The tail of a statement whose "u(id)" lists records closed under their
 * ancestors: for DagLoad (columns 1, 2, 3), each with its parents and, when
 * it is retracted (MEMTX_IS_RETRACTED), seed 1.  The probe sits in a
 * lateral subquery of one row, so it is planned for one execution (the
 * record by its primary key, the registry by its own), never as a hash of
 * every retracted record.
 */
#define DAG_RETRACTED_SEEDS \
	"SELECT u.id, ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = u.id), x.seed " \
	"FROM u CROSS JOIN LATERAL (" \
	"  SELECT CASE WHEN EXISTS (SELECT FROM memtx.records r WHERE r.id = u.id " \
	"                             AND " MEMTX_IS_RETRACTED("r") ") " \
	"         THEN 1 END AS seed OFFSET 0) x"
extern void DagSeedSet(Dag *dag, int64 id, int64 seed);
extern int64 DagSeed(Dag *dag, int64 id);
extern int64 DagReach(Dag *dag, int64 id);

#endif							/* MEMTX_DAG_H */
