/*
 * value.c — record values.
 *
 * Two values are the same when their canonical jsonb text is equal (so 1 and
 * 1.0 differ, while object key order never matters).  memtx.value_digest
 * is the SHA-256 of that text; the single-truth exclusion constraint compares
 * digests so that arbitrarily large values fit in its index.
 */
#include "memtx.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "utils/builtins.h"
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
