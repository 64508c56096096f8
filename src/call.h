/*
 * call.h — the calling convention shared by every memtx SQL function.
 */
#ifndef MEMTX_CALL_H
#define MEMTX_CALL_H

#include "memtx.h"

#include "utils/jsonb.h"

/*
 * An API call: who called, and the user context to restore.  Table access
 * happens as the extension owner; permission decisions use the caller.
 */
typedef struct MemtxCall
{
	Oid			caller;			/* the principal (SPEC §7) */
	char	   *caller_name;
	Oid			save_userid;
	int			save_sec_context;
} MemtxCall;

extern void MemtxCallBegin(MemtxCall *call);	/* READ COMMITTED only (0A000) */
extern void MemtxCallBeginAudit(MemtxCall *call);	/* any isolation level */
extern void MemtxCallEnd(MemtxCall *call);

/* Prepared, kept SPI plans: *slot is filled on first use. */
extern SPIPlanPtr MemtxPlan(SPIPlanPtr *slot, const char *sql, int nargs, const Oid *argtypes);
extern int	MemtxExec(SPIPlanPtr plan, const Datum *values, const char *nulls, long limit);

/* Reading the current SPI result. */
extern Datum MemtxGet(int row, int col, bool *isnull);
extern int64 MemtxGetInt64(int row, int col);
/* Column col of every row, palloc'd; *n is the row count. */
extern int64 *MemtxGetInt64Column(int col, uint64 *n);
extern char *MemtxGetText(int row, int col);	/* NULL when null */
extern double MemtxGetFloat8(int row, int col);
extern bool MemtxGetBool(int row, int col);

/* Argument checking: NULLs and ranges get specific SQLSTATEs. */
extern void MemtxRequireArg(FunctionCallInfo fcinfo, int argno, const char *name);
extern void MemtxCheckUnit(double v, const char *name);
extern void MemtxCheckText(text *t, const char *name, int maxbytes);
extern Datum MemtxStateDatum(FunctionCallInfo fcinfo, MemtxState state);

#endif							/* MEMTX_CALL_H */
