/*
 * value.c — digests of record values and slots, for the single-truth
 * exclusion constraint.
 *
 * Two values are the same when their canonical jsonb text is equal (so 1 and
 * 1.0 differ, while object key order never matters).  memtx.value_digest
 * is the SHA-256 of that text; the constraint compares digests so that
 * arbitrarily large values fit in its index.
 *
 * A slot (namespace, entity, attribute) enters the constraint the same way:
 * memtx.slot_digest is the SHA-256 of the three texts, each preceded by its
 * length, and memtx.slot_key is that digest's first eight bytes as a bigint.
 * The key leads the constraint's GiST index: btree_gist orders an integer
 * exactly, so a probe for one slot descends a few pages, where leading text
 * columns let the tree's key ranges overlap and a probe visit dozens.  The
 * key's collisions are harmless (the digest follows it).  Neither appears in
 * a query that filters by namespace, entity or attribute, so the planner
 * never reaches for this index without the key.
 */
#include "memtx.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/builtins.h"
#include "port/pg_bswap.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(memtx_value_digest);
Datum
memtx_value_digest(PG_FUNCTION_ARGS)
{
	Jsonb	   *jb = PG_GETARG_JSONB_P(0);
	char	   *text = JsonbToCString(NULL, &jb->root, VARSIZE(jb));
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	bytea	   *result = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (uint8 *) text, strlen(text)) < 0 ||
		pg_cryptohash_final(ctx, (uint8 *) VARDATA(result), PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute SHA-256 digest: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
	SET_VARSIZE(result, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	PG_RETURN_BYTEA_P(result);
}

static void
SlotDigest(PG_FUNCTION_ARGS, uint8 *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);

	if (pg_cryptohash_init(ctx) < 0)
		elog(ERROR, "could not compute SHA-256 digest: %s", pg_cryptohash_error(ctx));
	for (int i = 0; i < 3; i++)
	{
		text	   *t = PG_GETARG_TEXT_PP(i);
		uint32		len = pg_hton32((uint32) VARSIZE_ANY_EXHDR(t));

		if (pg_cryptohash_update(ctx, (uint8 *) &len, sizeof(len)) < 0 ||
			pg_cryptohash_update(ctx, (uint8 *) VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)) < 0)
			elog(ERROR, "could not compute SHA-256 digest: %s", pg_cryptohash_error(ctx));
	}
	if (pg_cryptohash_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute SHA-256 digest: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
}

PG_FUNCTION_INFO_V1(memtx_slot_digest);
Datum
memtx_slot_digest(PG_FUNCTION_ARGS)
{
	bytea	   *result = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);

	SlotDigest(fcinfo, (uint8 *) VARDATA(result));
	SET_VARSIZE(result, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(memtx_slot_key);
Datum
memtx_slot_key(PG_FUNCTION_ARGS)
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	uint64		key;

	SlotDigest(fcinfo, digest);
	memcpy(&key, digest, sizeof(key));
	PG_RETURN_INT64((int64) pg_ntoh64(key));
}
