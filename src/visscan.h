/*
 * visscan.h — the first rows of a cursor that a transaction can see
 * (visscan.c).
 */
#ifndef MEMTX_VISSCAN_H
#define MEMTX_VISSCAN_H

#include "record.h"
#include "txn.h"

/*
 * Called for each row of the cursor visible to the transaction, in the
 * cursor's order, in a memory context reset after each batch (copy what is
 * kept); returns true to end the scan.
 */
typedef bool (*VisScanEmit) (MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg);

/*
 * Read portal (memtx.records rows, maybe with more columns) in batches that
 * start at first_batch rows and grow up to max_batch, keep the rows visible
 * to t (VisVisibleMany, one visibility pass per batch) and hand them to emit
 * until it asks to stop or the cursor ends; closes the portal.  Returns
 * whether emit stopped the scan.
 */
extern bool VisScan(MemtxTxn *t, Portal portal, int first_batch, long max_batch,
					VisScanEmit emit, void *arg);

/*
 * The same without a transaction: the rows that are active (committed or
 * action_safe) and that role reader may read (VisReadable), as memtx.lookup
 * keeps them.
 */
extern bool VisScanCurrent(Oid reader, Portal portal, int first_batch, long max_batch,
						   VisScanEmit emit, void *arg);

#endif							/* MEMTX_VISSCAN_H */
