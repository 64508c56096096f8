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

# The test runners: test/runners is their one table (name, where it runs,
# how it is counted, what it runs).  make installcheck-NAME runs runner NAME
# against the server the PG* environment names, with memtx installed
# (test/run-cluster; NAME with - for _, e.g. installcheck-enumerate-c);
# make check-NAME runs it as bash test/run does (deps, the test build, a
# throwaway cluster).  Each prints "N passed, N failed" last.
MEMTX_RUNNER_NAMES := $(subst _,-,$(shell bash test/runners --list --all))
MEMTX_CLUSTER_RUNNERS := $(subst _,-,$(shell bash test/runners --list cluster --all))
.PHONY: $(addprefix installcheck-,$(MEMTX_CLUSTER_RUNNERS)) $(addprefix check-,$(MEMTX_RUNNER_NAMES))
$(addprefix installcheck-,$(MEMTX_CLUSTER_RUNNERS)): installcheck-%:
	MEMTX_RUNNERS="$(subst -,_,$*)" bash test/run-cluster

$(addprefix check-,$(MEMTX_RUNNER_NAMES)): check-%:
	MEMTX_RUNNERS="$(subst -,_,$*)" bash test/run

# Parts of runners that need PGXS's variables.  pgtap: pg_prove over
# test/pgtap/*.sql (PG_PROVE may name another TAP harness: test/runners
# passes test/tap-count.pl, which also counts the results).
PG_PROVE ?= pg_prove
.PHONY: pgxs-pgtap pgxs-vector-regress pgxs-vector-isolation
pgxs-pgtap:
	$(bindir)/dropdb --if-exists $(PGTAP_TESTDB)
	$(bindir)/createdb $(PGTAP_TESTDB)
	$(bindir)/psql -X -q -v ON_ERROR_STOP=1 -d $(PGTAP_TESTDB) -c 'CREATE EXTENSION pgtap'
	$(PG_PROVE) -d $(PGTAP_TESTDB) $(sort $(wildcard test/pgtap/*.sql))

# memtx_vector's suites, which need pgvector (runner "vector" checks for it):
# pg_regress over test/vector/sql, then the isolation specs test/vector/specs
VECTOR_REGRESS   = $(patsubst test/vector/sql/%.sql,%,$(sort $(wildcard test/vector/sql/*.sql)))
VECTOR_ISOLATION = $(patsubst test/vector/specs/%.spec,%,$(sort $(wildcard test/vector/specs/*.spec)))
pgxs-vector-regress:
	$(pg_regress_installcheck) --inputdir=test/vector --outputdir=test/vector \
		--load-extension=btree_gist --dbname=memtx_vector_regression $(VECTOR_REGRESS)

pgxs-vector-isolation:
	$(pg_isolation_regress_installcheck) --inputdir=test/vector --outputdir=test/vector/output_iso \
		--load-extension=btree_gist --dbname=memtx_vector_isolation $(VECTOR_ISOLATION)

.PHONY: test demo
test:
	bash test/run

demo:
	bash demo/run
