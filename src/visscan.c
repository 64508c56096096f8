/*
 * visscan.c — the first rows of a cursor that a transaction can see.
 *
 * memtx.recall, memtx.recall_similar and the action gate each want the
 * first few rows of an ordered cursor that one transaction can see (and
 * memtx.search those the calling role may read of the active ones), and
 * visibility is decided outside the query (VisVisibleMany), so a query
 * cannot filter it.  Reading row by row would run one visibility pass per
 * row; reading everything would judge rows past the last one needed.  So
 * the cursor is read in batches that grow, each judged in one visibility
 * pass, until the caller has what it wants or the cursor ends.
 */
#include "visscan.h"
#include "visibility.h"

#include "utils/memutils.h"

/*
 * The next batch: at least twice the last, and up to four times it when the
 * share of visible rows read so far (counted as at least one in sixteen)
 * says the first batch's worth of visible rows wants more.  A transaction
 * that sees one row in ten reads its k rows in two or three batches, each a
 * visibility pass, rather than five; the cap keeps an unlucky first batch
 * from reading far past what is needed.
 */
static long
VisScanNextBatch(long batch, int first_batch, long max_batch, uint64 nread, uint64 nvisible)
{
	long		next = batch * 2;

	if (nvisible < (uint64) first_batch)
	{
		double		share = Max((double) nvisible / (double) Max(nread, 1), 1.0 / 16);
		double		wanted = (first_batch - nvisible) / share;

		next = Max(next, (long) Min(wanted, (double) batch * 4));
	}
	return Min(next, max_batch);
}

/*
 * The scan of VisScan (t given) and VisScanCurrent (t NULL: the active rows
 * reader may read).
 */
static bool
VisScanWith(MemtxTxn *t, Oid reader, Portal portal, int first_batch, long max_batch,
			VisScanEmit emit, void *arg)
{
	MemoryContext batchcxt;
	bool		stopped = false;
	long		batch = first_batch;
	uint64		nread = 0;
	uint64		nvisible = 0;

	batchcxt = AllocSetContextCreate(CurrentMemoryContext, "memtx visible scan batch",
									 ALLOCSET_DEFAULT_SIZES);
	while (!stopped)
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(batchcxt);
		SPITupleTable *tt;
		uint64		n;
		MemtxRec   *recs;
		bool	   *visible;

		SPI_cursor_fetch(portal, true, batch);
		tt = SPI_tuptable;
		n = SPI_processed;
		recs = RecDecodeAll(tt, n);
		visible = palloc(sizeof(bool) * (n + 1));
		if (t != NULL)
			VisVisibleMany(t, recs, (int) n, visible);
		else
			for (uint64 i = 0; i < n; i++)
				visible[i] = MEMTX_IS_ACTIVE(recs[i].state) && VisReadable(reader, &recs[i]);
		for (uint64 i = 0; i < n && !stopped; i++)
			if (visible[i])
			{
				nvisible++;
				stopped = emit(&recs[i], tt->vals[i], tt->tupdesc, arg);
			}
		nread += n;
		SPI_freetuptable(tt);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(batchcxt);
		if (n < (uint64) batch)
			break;
		batch = VisScanNextBatch(batch, first_batch, max_batch, nread, nvisible);
	}
	SPI_cursor_close(portal);
	MemoryContextDelete(batchcxt);
	return stopped;
}

bool
VisScan(MemtxTxn *t, Portal portal, int first_batch, long max_batch, VisScanEmit emit, void *arg)
{
	return VisScanWith(t, InvalidOid, portal, first_batch, max_batch, emit, arg);
}

bool
VisScanCurrent(Oid reader, Portal portal, int first_batch, long max_batch, VisScanEmit emit, void *arg)
{
	return VisScanWith(NULL, reader, portal, first_batch, max_batch, emit, arg);
}
