/*
 * dag.c — what flows down the derivation DAG to a set of records.
 *
 * Several questions are asked of every record of a set about its ancestry:
 * is any strict ancestor inactive (verified_read, §3)?  Does one descend
 * from a revoked input (act, §16)?  Which retraction reached it last
 * (check_invariants, I2)?  Asked one record at a time, each walks the part
 * of the ancestry the records share again: a chain of n records read at
 * verified_read walked n²/2 edges.  Here the set is loaded once, closed
 * under the walk that matters (its records' ancestors, memtx.ancestors_of,
 * or a set of sources and their descendants, memtx.descendants_of: the
 * predicates of sql/memtx.sql stay the one definition of the walks), each
 * record with its parents and a seed; a record's reach is the greatest seed
 * among its strict ancestors in the set, computed once per record by a
 * depth-first pass over parents that remembers every answer.  Cost: one
 * visit per record and one per edge of the set, whatever its shape.
 *
 * Seeds are numbers so that one pass answers both kinds of question: a flag
 * (seed 1 on the records that are wrong by themselves: reach 1 means a wrong
 * ancestor) and an instant (the clock position of a retraction: reach is the
 * latest retraction above the record).  A parent outside the loaded set
 * contributes nothing; a closed set has every parent that matters.
 *
 * Edges point from younger to older records (a parent exists when its child
 * is staged), so the graph has no cycle; a record met again on the path
 * whose ancestry is being computed (a cycle, which only a store written
 * behind the API could hold) contributes its seed alone.  The pass keeps its
 * own stack, so a chain of any depth costs no C stack.
 */
#include "dag.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"

typedef enum DagMark
{
	DAG_UNSEEN,
	DAG_OPEN,					/* on the stack, its parents being computed */
	DAG_DONE
} DagMark;

typedef struct DagNode
{
	int64		id;				/* hash key */
	int64		seed;			/* DAG_NONE: no source */
	int64		reach;			/* greatest seed among strict ancestors */
	int64	   *parents;
	int			nparents;
	int			next;			/* the next parent to visit */
	DagMark		mark;
} DagNode;

struct Dag
{
	HTAB	   *nodes;
	DagNode   **stack;
	int			cap;
};

/*
 * The records of SPI result tt (n rows): column idcol their id (int8),
 * parentscol their parents (int8[]), seedcol their seed (int8, NULL: none;
 * seedcol 0: no column, seeds are set by DagSeedSet).
 * Allocated in the current memory context; a record listed twice keeps its
 * first row.
 */
Dag *
DagLoad(SPITupleTable *tt, uint64 n, int idcol, int parentscol, int seedcol)
{
	Dag		   *dag = palloc(sizeof(Dag));
	HASHCTL		ctl;

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(DagNode);
	ctl.hcxt = CurrentMemoryContext;
	dag->nodes = hash_create("memtx dag", Max(n, 16), &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	dag->cap = 64;
	dag->stack = palloc(sizeof(DagNode *) * dag->cap);
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = tt->vals[i];
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, idcol, &isnull));
		Datum		parents = SPI_getbinval(tup, tt->tupdesc, parentscol, &isnull);
		Datum		seed = (Datum) 0;
		bool		seednull;
		DagNode    *node;
		bool		found;

		node = hash_search(dag->nodes, &id, HASH_ENTER, &found);
		if (found)
			continue;
		seednull = true;
		if (seedcol > 0)
			seed = SPI_getbinval(tup, tt->tupdesc, seedcol, &seednull);
		node->seed = seednull ? DAG_NONE : DatumGetInt64(seed);
		node->reach = DAG_NONE;
		node->mark = DAG_UNSEEN;
		node->parents = NULL;
		node->nparents = 0;
		node->next = 0;
		if (!isnull)
		{
			Datum	   *elems;
			bool	   *nulls;
			int			nelems;

			deconstruct_array(DatumGetArrayTypeP(parents), INT8OID, sizeof(int64),
							  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &nelems);
			node->parents = palloc(sizeof(int64) * (nelems + 1));
			for (int j = 0; j < nelems; j++)
				if (!nulls[j])
					node->parents[node->nparents++] = DatumGetInt64(elems[j]);
			pfree(elems);
			pfree(nulls);
		}
	}
	return dag;
}

/* Make seed the seed of record id, when it is loaded (before any DagReach). */
void
DagSeedSet(Dag *dag, int64 id, int64 seed)
{
	DagNode    *node = hash_search(dag->nodes, &id, HASH_FIND, NULL);

	if (node != NULL)
		node->seed = seed;
}

/* The seed of record id (DAG_NONE when it has none, or is not loaded). */
int64
DagSeed(Dag *dag, int64 id)
{
	DagNode    *node = hash_search(dag->nodes, &id, HASH_FIND, NULL);

	return node ? node->seed : DAG_NONE;
}

static void
DagPush(Dag *dag, int *top, DagNode *node)
{
	if (*top == dag->cap)
	{
		dag->cap *= 2;
		dag->stack = repalloc(dag->stack, sizeof(DagNode *) * dag->cap);
	}
	node->mark = DAG_OPEN;
	dag->stack[(*top)++] = node;
}

/*
 * The greatest seed among the strict ancestors of record id within the set
 * (DAG_NONE when none has one, or id is not loaded).
 */
int64
DagReach(Dag *dag, int64 id)
{
	DagNode    *start = hash_search(dag->nodes, &id, HASH_FIND, NULL);
	int			top = 0;

	if (start == NULL)
		return DAG_NONE;
	if (start->mark == DAG_DONE)
		return start->reach;
	DagPush(dag, &top, start);
	while (top > 0)
	{
		DagNode    *node = dag->stack[top - 1];
		DagNode    *unseen = NULL;

		/* descend into the next parent not computed yet ... */
		while (unseen == NULL && node->next < node->nparents)
		{
			DagNode    *p = hash_search(dag->nodes, &node->parents[node->next++], HASH_FIND, NULL);

			if (p != NULL && p->mark == DAG_UNSEEN)
				unseen = p;
		}
		if (unseen != NULL)
		{
			DagPush(dag, &top, unseen);
			continue;
		}
		/* ... and compute the node once every parent is */
		for (int j = 0; j < node->nparents; j++)
		{
			DagNode    *p = hash_search(dag->nodes, &node->parents[j], HASH_FIND, NULL);

			if (p == NULL)
				continue;
			node->reach = Max(node->reach, p->seed);
			if (p->mark == DAG_DONE)
				node->reach = Max(node->reach, p->reach);
		}
		node->mark = DAG_DONE;
		top--;
	}
	return start->reach;
}
