/*
 * conflict.h — check 3 of the commit pipeline (SPEC §4 3a–3d) and the
 * ancestry facts check 4 needs.
 */
#ifndef MEMTX_CONFLICT_H
#define MEMTX_CONFLICT_H

#include "record.h"
#include "txn.h"


typedef struct ConflictFacts
{
	bool		revoked_parent;
	bool		uncommitted_parent;
	bool		inactive_parent;
	bool		laundering;
	bool		unstable;		/* a transitive ancestor revoked or registered */
	Datum	   *walk;			/* parents outside the transaction, for check 4 */
	int			nwalk;
} ConflictFacts;

typedef struct ConflictResult
{
	ConflictFacts facts;
	MemtxReason reason;			/* MR_NONE: the checks passed */
	int			nrivals;		/* rivals found in step d */
	Datum	   *supersede;		/* ids to supersede when the candidate passes */
	int			nsupersede;
} ConflictResult;

typedef struct ConflictMemo ConflictMemo;

extern ConflictMemo *ConflictMemoCreate(void);
extern void ConflictPrefetchRivals(ConflictMemo *memo, const int64 *ids, int n);
extern void ConflictCheck(MemtxTxn *t, MemtxRec *cand, bool provenance, ConflictMemo *memo,
						  ConflictResult *res);
extern void ConflictSupersede(Datum *ids, int n);
extern void ConflictFetchRivals(int64 id);
extern void ConflictFetchRivalsOf(MemtxRec *cand);

/* pipeline.c */

#endif							/* MEMTX_CONFLICT_H */
