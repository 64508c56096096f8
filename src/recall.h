/*
 * recall.h — what memtx.recall and memtx.recall_similar share
 * (recall.c): the full-text query and ranking of SPEC §14; both read
 * their candidates through VisScan (visscan.h).
 */
#ifndef MEMTX_RECALL_H
#define MEMTX_RECALL_H

#include "record.h"
#include "txn.h"
#include "visscan.h"

#include "tsearch/ts_type.h"

/* k of memtx.recall and memtx.recall_similar: 1..RETRIEVAL_MAX_K (22003). */
#define RETRIEVAL_MAX_K 1000

extern void RetrievalCheckK(int32 k);

/* The websearch query of SPEC §14, parsed once per call (54000 when too big). */
extern TSQuery RetrievalQuery(Datum query);

/*
 * The matches of query in namespace ns, best first (rank descending, id), as
 * an open cursor of memtx.records rows with a column recall_rank; prefix
 * and valid_at filter when not NULL, active_only keeps the active states.
 */
extern Portal RetrievalTextOpen(const char *ns, TSQuery query, Datum prefix, bool no_prefix,
								Datum valid_at, bool no_valid_at, bool active_only);

/* The largest batch of matches a recall reads at once (VisScan). */
#define RECALL_MAX_BATCH 4096

#endif							/* MEMTX_RECALL_H */
