/*
 * record.h — a memtx record as the C code sees it.
 */
#ifndef MEMTX_RECORD_H
#define MEMTX_RECORD_H

#include "txn.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "utils/array.h"

typedef struct MemtxRec
{
	int64		id;
	int64		tx_id;
	MemtxState	state;
	int			kind;			/* index into MemtxKindNames */
	int			scope;			/* index into MemtxScopeNames */
	char	   *namespace;
	char	   *entity;
	char	   *attribute;
	char	   *source;			/* NULL when unset */
	double		authority;
	double		confidence;
	char	   *owner;
	ArrayType  *readers;
	ArrayType  *writers;
	bool		has_observed;
	TimestampTz observed_at;
	FullTransactionId staged_xid;
	int64		staged_pos;
	bool		committed;		/* committed_xid is set */
	Datum		committed_xid;
	int64		committed_seq;
} MemtxRec;

#define KIND_TOOL_ACTION 5
#define KIND_IS_VIEW(k) ((k) >= 1 && (k) <= 4)
#define SCOPE_PUBLIC 2

/* record.c */
#define MEMTX_MAX_IDS 10000

/* Parse a full memtx.records row (SELECT r.*). */
extern void RecParse(HeapTuple tuple, TupleDesc desc, MemtxRec *rec);
extern int	MemtxLabelIndex(const char *const *names, int n, const char *label);
extern ArrayType *RecIdArray(ArrayType *arr, const char *name, int *count);
/* A bigint[] of n ids (int8 datums). */
extern Datum RecIdsDatum(Datum *ids, int n);
extern MemtxRec *RecFetchByIds(MemtxCall *call, Oid agent, ArrayType *ids, int n,
							   const char *what);
extern void RecNotFound(const char *what, int64 id) pg_attribute_noreturn();

/* visibility.c */
#endif							/* MEMTX_RECORD_H */
