/*
 * pipeline.h — the commit pipeline and its parts.
 */
#ifndef MEMTX_PIPELINE_H
#define MEMTX_PIPELINE_H

#include "record.h"

#include "utils/tuplestore.h"

/* conflict.c: check 3 (a–d), and the ancestry fact check 4 needs. */
typedef struct ConflictFacts
{
	bool		revoked_parent;
	bool		uncommitted_parent;
	bool		inactive_parent;
	bool		laundering;
	bool		unstable;		/* a transitive ancestor revoked or registered */
} ConflictFacts;

typedef struct ConflictResult
{
	ConflictFacts facts;
	const char *reason;
	int			nrivals;		/* rivals found in step d */
	Datum	   *supersede;		/* ids to supersede when the candidate passes */
	int			nsupersede;
} ConflictResult;

extern void ConflictCheck(MemtxTxn *t, MemtxRec *cand, bool provenance, ConflictResult *res);
extern void ConflictSupersede(Datum *ids, int n);
extern void ConflictFetchRivals(int64 id);

/* pipeline.c */
extern void PipelinePromote(int64 id, bool action_safe, bool set_verdict);

/* slot locks, taken exclusive in sorted order */
extern void PipelineLockSlots(const char *ns, char **entities, char **attributes, int n);

/* cascade.c */
extern int	CascadeRun(MemtxCall *call, const char *ns, int64 *roots, int nroots,
					   const char *root_reason, const char *note,
					   Tuplestorestate *out);

/* events.c */
extern void MemtxNotify(const char *event, const char *ns, int64 tx, int64 record,
						const char *reason, int64 count);

#endif							/* MEMTX_PIPELINE_H */
