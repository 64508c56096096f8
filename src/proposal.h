/*
 * proposal.h — exact-head proposals and proposal ids (SPEC §10).
 */
#ifndef MEMTX_PROPOSAL_H
#define MEMTX_PROPOSAL_H

#include "record.h"
#include "txn.h"

/* What a staged record stores once defaults apply: the content a retry repeats. */
typedef struct ProposalContent
{
	Datum		entity;
	Datum		attribute;
	Datum		value;
	MemtxKind	kind;
	Datum		source;
	bool		source_null;
	double		confidence;
	MemtxScope	scope;
	ArrayType  *readers;
	ArrayType  *writers;
	Datum		valid;
	bool		valid_null;
	bool		has_observed;
	TimestampTz observed_at;
	int64		expected_head;	/* -1: none */
	ArrayType  *parents;		/* distinct, sorted */
} ProposalContent;

extern void ProposalCheckHead(MemtxTxn *t, text *entity, text *attribute, int64 head);
extern bool ProposalHeadMatches(MemtxRec *rec);
extern int64 ProposalFindRetry(MemtxCall *call, MemtxTxn *t, const char *proposal,
							   ProposalContent *c);

#endif							/* MEMTX_PROPOSAL_H */
