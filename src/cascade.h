/*
 * cascade.h — retraction and typed repair of descendants (SPEC §6).
 */
#ifndef MEMTX_CASCADE_H
#define MEMTX_CASCADE_H

#include "memtx.h"

#include "utils/tuplestore.h"

/*
 * Retract roots (all in namespace ns) with root_reason and repair their
 * descendants; log rows go to out when it is not NULL.  Returns the number
 * of log rows written.
 */
extern int	CascadeRun(const char *ns, int64 *roots, int nroots,
					   const char *root_reason, const char *note,
					   Tuplestorestate *out);

#endif							/* MEMTX_CASCADE_H */
