/*
 * record.h — a memtx record as the C code sees it.
 */
#ifndef MEMTX_RECORD_H
#define MEMTX_RECORD_H

#include "call.h"

#include "access/htup.h"
#include "access/transam.h"
#include "access/tupdesc.h"
#include "utils/array.h"

typedef struct MemtxRec
{
	int64		id;
	int64		tx_id;
	MemtxState	state;
	MemtxKind	kind;
	MemtxScope	scope;
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
	int64		expected_head;	/* -1: no expectation; 0: typed absence (SPEC §10) */
	/*
	 * A candidate not yet in memtx.records (memtx.propose checks its record
	 * before inserting it, SPEC §21): the content the checks read from the
	 * row otherwise.  false for every decoded row.
	 */
	bool		pending;
	Datum		value;			/* jsonb; pending only */
	Datum		valid;			/* tstzrange; pending only */
	ArrayType  *parents;		/* bigint[], sorted distinct; pending only */
} MemtxRec;

/*
 * Where the columns RecDecode reads sit in one query result: resolved once
 * per result from its TupleDesc, then used for every row.
 */
typedef struct RecLayout
{
	TupleDesc	desc;
	AttrNumber	id;
	AttrNumber	tx_id;
	AttrNumber	state;
	AttrNumber	kind;
	AttrNumber	scope;
	AttrNumber	namespace;
	AttrNumber	entity;
	AttrNumber	attribute;
	AttrNumber	source;
	AttrNumber	authority;
	AttrNumber	confidence;
	AttrNumber	owner;
	AttrNumber	readers;
	AttrNumber	writers;
	AttrNumber	observed_at;
	AttrNumber	staged_xid;
	AttrNumber	staged_pos;
	AttrNumber	committed_xid;
	AttrNumber	committed_seq;
	AttrNumber	expected_head;
} RecLayout;

/* record.c */
#define MEMTX_MAX_IDS 10000

/* Decode full memtx.records rows (SELECT r.*, maybe with more columns). */
extern void RecLayoutInit(RecLayout *layout, TupleDesc desc);
extern void RecDecode(const RecLayout *layout, HeapTuple tuple, MemtxRec *rec);
extern MemtxRec *RecDecodeAll(SPITupleTable *tt, uint64 n);
extern void RecParse(HeapTuple tuple, TupleDesc desc, MemtxRec *rec);
extern ArrayType *RecIdArray(ArrayType *arr, const char *name, int *count);
/* A bigint[] of n ids (int8 datums). */
extern Datum RecIdsDatum(Datum *ids, int n);
extern Datum RecIdsDatumOf(const int64 *ids, int n);
extern MemtxRec *RecFetchByIds(MemtxCall *call, Oid agent, ArrayType *ids, int n,
							   const char *what, const char *ns);
extern void RecFetchOwned(MemtxCall *call, int64 id, const char *verb, MemtxRec *rec);
extern void RecNotFound(const char *what, int64 id) pg_attribute_noreturn();

/*
 * What a role may read (SPEC §7): the owner or a member of it, a member of a
 * reader, or anyone when public.  Here, below the loads that check it; what
 * a memtx transaction may see is visibility.c's.
 */
extern bool VisReadable(Oid role, MemtxRec *rec);

#endif							/* MEMTX_RECORD_H */
