/*
 * clock.c — the memtx clock (SPEC §2).
 *
 * memtx.now() is memtx.logical_now when that is set, else the transaction
 * timestamp; validity and observation times are judged against it so tests
 * and replays are deterministic.
 */
#include "memtx.h"

#include "access/xact.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

TimestampTz
MemtxNow(void)
{
	if (memtx_logical_now != NULL && memtx_logical_now[0] != '\0')
		return DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													   CStringGetDatum(memtx_logical_now),
													   ObjectIdGetDatum(InvalidOid),
													   Int32GetDatum(-1)));
	return GetCurrentTransactionStartTimestamp();
}

PG_FUNCTION_INFO_V1(memtx_now);
Datum
memtx_now(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(MemtxNow());
}
