/*
 * recall.h — what memtx.recall and memtx.recall_similar share
 * (recall.c): the full-text query and ranking of SPEC §14, and the
 * batched scan that keeps the rows visible to a transaction.
 */
#ifndef MEMTX_RECALL_H
#define MEMTX_RECALL_H

#include "record.h"
#include "txn.h"

#include "tsearch/ts_type.h"

/* k of memtx.recall and memtx.recall_similar: 1..RETRIEVAL_MAX_K (22003). */
#define RETRIEVAL_MAX_K 1000

extern void RetrievalCheckK(int32 k);

/* The websearch query of SPEC §14, parsed once per call (54000 when too big). */
extern TSQuery RetrievalQuery(Datum query);

/*
 * The matches of query in namespace ns, best first (rank descending, id), as
 * an open cursor of memtx.records rows with a column recall_rank; prefix
 * and valid_at filter when not NULL.
 */
extern Portal RetrievalTextOpen(const char *ns, TSQuery query, Datum prefix, bool no_prefix,
								Datum valid_at, bool no_valid_at);

/*
 * Called for each row of the cursor visible to the transaction, in the
 * cursor's order, in a memory context reset after each batch (copy what is
 * kept); returns true to end the scan.
 */
typedef bool (*RetrievalEmit) (MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg);

/*
 * Read portal (memtx.records rows, maybe with more columns) in batches
 * that start at first_batch rows and grow (RetrievalNextBatch), keep the rows visible to t
 * (VisVisibleMany, one visibility pass per batch) and hand them to emit
 * until it asks to stop or the cursor ends; closes the portal.  Returns
 * whether emit stopped the scan.
 */
extern bool RetrievalScan(MemtxTxn *t, Portal portal, int first_batch, RetrievalEmit emit, void *arg);

#endif							/* MEMTX_RECALL_H */
