# memtx, and its companion memtx_vector (SPEC §19: semantic recall through
# pgvector), which has no library of its own: its functions are C in memtx's
# module, and memtx never needs pgvector (no header, no link)
EXTENSION  = memtx memtx_vector
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" memtx.control)
VECTOR_VERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" memtx_vector.control)

MODULE_big = memtx
OBJS       = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
HEADERS    = $(wildcard src/*.h)

# sql/memtx.sql is the whole current catalog (pgvector's layout): the build
# names it memtx--$(EXTVERSION).sql, which CREATE EXTENSION memtx runs.  A
# store installed earlier upgrades through the frozen base
# sql/memtx--0.1.0.sql and one step script per release, sql/memtx--A--B.sql
# (shipped even when empty); test/sql/upgrade.sql proves that a fresh install
# equals an upgraded one.
DATA       = sql/memtx--0.1.0.sql $(sort $(wildcard sql/memtx--*--*.sql))
DATA_built = sql/memtx--$(EXTVERSION).sql
# memtx_vector the same way: sql/memtx_vector.sql is its current catalog, built
# as memtx_vector--$(VECTOR_VERSION).sql.  0.1.0 is its first release, so that
# build is also its base; when 0.2.0 is released the 0.1.0 script is frozen
# (committed as sql/memtx_vector--0.1.0.sql) and steps follow, as for memtx.
DATA      += $(sort $(wildcard sql/memtx_vector--*--*.sql))
DATA_built += sql/memtx_vector--$(VECTOR_VERSION).sql

# memtx_router (SPEC §20), the companion installed in a router database in
# front of memtx nodes: sql/memtx_router.sql is its current catalog,
# generated from memtx's (make router-sql); the build names it
# memtx_router--$(ROUTER_VERSION).sql.
ROUTER_VERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" memtx_router.control 2>/dev/null)
DATA       += memtx_router.control
DATA_built += sql/memtx_router--$(ROUTER_VERSION).sql

PG_CPPFLAGS = -I$(srcdir)/src -DMEMTX_LIBRARY_VERSION='"$(EXTVERSION)"'
# -Wno-unused-parameter: PostgreSQL's own headers (bufpage.h, ilist.h) have
# inline functions with unused parameters
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter

# make MEMTX_ASSERT=1: the test build (test/run builds so): assertions on in
# the extension, and the fault points of src/fault.c
ifdef MEMTX_ASSERT
PG_CPPFLAGS += -DUSE_ASSERT_CHECKING -DMEMTX_TESTING
endif

TESTS        = $(sort $(wildcard test/sql/*.sql))
REGRESS      = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --outputdir=test --load-extension=btree_gist
ISOLATION    = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --outputdir=test/output_iso --load-extension=btree_gist
# TAP (test/t/*.pl, after REGRESS and ISOLATION in make installcheck): each
# test starts clusters of its own with test/tap.conf appended (memtx
# preloaded) unless TEMP_CONFIG names another file; initdb refuses to run
# as root (test/run-tap runs them as user postgres)
TAP_TESTS   = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))
export TEMP_CONFIG ?= $(CURDIR)/test/tap.conf

EXTRA_CLEAN = test/results test/regression.diffs test/regression.out test/output_iso tmp_check \
	test/vector/results test/vector/regression.diffs test/vector/regression.out test/vector/output_iso

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on the project's headers (PGXS tracks none by default)
$(OBJS): $(HEADERS)

sql/memtx--$(EXTVERSION).sql: sql/memtx.sql
	cp $< $@

sql/memtx_vector--$(VECTOR_VERSION).sql: sql/memtx_vector.sql
	cp $< $@

sql/memtx_router--$(ROUTER_VERSION).sql: sql/memtx_router.sql
	cp $< $@

# Regenerates sql/memtx_router.sql from the catalog of the memtx built here,
# on a throwaway cluster (after a change to memtx's functions; commit the
# result).  test/router/run fails while it is stale.
.PHONY: router-sql
router-sql: all
	bash scripts/gen-router.sh

# prove finds the tests' helper modules in test/t (Makefile.global resets
# PROVE_FLAGS, hence here)
PROVE_FLAGS = -I ./test/t

# the databases make installcheck tests in
CONTRIB_TESTDB   = memtx_regression
ISOLATION_TESTDB = memtx_isolation
PGTAP_TESTDB     = memtx_pgtap

# The suites beyond PGXS's three, against the server in the PG* environment
# with memtx installed (test/run runs them all on a cluster of its own).
# PG_PROVE and PROVE may name another TAP harness (test/run uses
# test/tap-count.pl, which also counts the results).
PG_PROVE ?= pg_prove
.PHONY: installcheck-pgtap installcheck-dump installcheck-conformance installcheck-bench \
	installcheck-python installcheck-node installcheck-fuzz installcheck-model \
	installcheck-histories installcheck-enumerate installcheck-enumerate-c installcheck-router \
	installcheck-mutants
installcheck-pgtap:
	$(bindir)/dropdb --if-exists $(PGTAP_TESTDB)
	$(bindir)/createdb $(PGTAP_TESTDB)
	$(bindir)/psql -X -q -v ON_ERROR_STOP=1 -d $(PGTAP_TESTDB) -c 'CREATE EXTENSION pgtap'
	$(PG_PROVE) -d $(PGTAP_TESTDB) $(sort $(wildcard test/pgtap/*.sql))

# pg_dump and pg_restore (serial and -j 4) give back every row of the store
installcheck-dump:
	PATH="$(bindir):$$PATH" bash test/dump/run.sh

# the declarative protocol cases, graded by rule
installcheck-conformance:
	PATH="$(bindir):$$PATH" conformance/run $(CONFORMANCE_FLAGS)

# every benchmark scenario at tiny scale: errors fail, timings don't
installcheck-bench:
	PATH="$(bindir):$$PATH" bench/run --scale tiny --no-cluster

# the Python client's tests, test/python and the example, with Debian's
# python3-pytest and python3-psycopg (PYTHON=/usr/bin/python3 by default)
installcheck-python:
	PATH="$(bindir):$$PATH" bash test/python/run

# every memtx function with hostile arguments (hypothesis, seeded), then
# sqlsmith as an agent and as a superuser: no crash, no XX000, no partial write
installcheck-fuzz:
	PATH="$(bindir):$$PATH" bash test/fuzz/run

# random traces of several agents checked call by call against an independent
# model of SPEC.md, with check_invariants() after every call
installcheck-model:
	PATH="$(bindir):$$PATH" bash test/model/run

# concurrent histories (12 clients, random colliding operations, with and
# without backend terminations) checked against the final store
installcheck-histories:
	PATH="$(bindir):$$PATH" bash test/histories/run

# every protocol state within small bounds, depth-first through savepoints,
# each call checked against the model of SPEC.md, check_invariants() at each
# new state
installcheck-enumerate:
	PATH="$(bindir):$$PATH" bash test/enumerate/run

# the same enumeration driven from inside the server (test/enumerate/driver:
# the memtx_enumerate test module, built and installed by run-c), after a
# self-test that plants faults it must report
installcheck-enumerate-c:
	PATH="$(bindir):$$PATH" bash test/enumerate/driver/run-c

# memtx across nodes: a router over two node databases (drift, a protocol
# flow, role attacks, a node down under load, the conformance cases compared
# with one node)
installcheck-router:
	PATH="$(bindir):$$PATH" bash test/router/run
# memtx_vector's tests, which need pgvector (test/run-cluster runs them as
# runner "vector" when pgvector is available and reports them skipped, with
# the way to install it, when not): pg_regress over test/vector/sql, then the
# isolation specs test/vector/specs
VECTOR_REGRESS   = $(patsubst test/vector/sql/%.sql,%,$(sort $(wildcard test/vector/sql/*.sql)))
VECTOR_ISOLATION = $(patsubst test/vector/specs/%.spec,%,$(sort $(wildcard test/vector/specs/*.spec)))
.PHONY: installcheck-vector installcheck-vector-isolation
installcheck-vector:
	$(pg_regress_installcheck) --inputdir=test/vector --outputdir=test/vector \
		--load-extension=btree_gist --dbname=memtx_vector_regression $(VECTOR_REGRESS)

installcheck-vector-isolation:
	$(pg_isolation_regress_installcheck) --inputdir=test/vector --outputdir=test/vector/output_iso \
		--load-extension=btree_gist --dbname=memtx_vector_isolation $(VECTOR_ISOLATION)
# every mutant of test/mutants applies to the tree and names the SPEC rule it
# breaks (the mutation run itself is a long command: test/mutants/run)
installcheck-mutants:
	PATH="$(bindir):$$PATH" test/mutants/run --self-test

# the Node client, the memtx-mcp server and the snippets of "Using memtx from an
# MCP host", with node --test (npm ci first when node_modules is missing or stale)
installcheck-node:
	PATH="$(bindir):$$PATH" bash test/node/run

.PHONY: test demo
test:
	bash test/run

demo:
	bash demo/run
