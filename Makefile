EXTENSION  = memtx
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = memtx
OBJS       = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
HEADERS    = $(wildcard src/*.h)

# sql/memtx--0.1.0.sql is the frozen base; every later release is a step
# script sql/memtx--A--B.sql (shipped even when empty), so CREATE EXTENSION
# walks the chain and a fresh install equals an upgraded one.
DATA       = $(sort $(wildcard sql/$(EXTENSION)--*.sql))

PG_CPPFLAGS = -I$(srcdir)/src -DMEMTX_LIBRARY_VERSION='"$(EXTVERSION)"'
# -Wno-unused-parameter: PostgreSQL's own headers (bufpage.h, ilist.h) have
# inline functions with unused parameters
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter

# make MEMTX_ASSERT=1: assertions on in the extension (test/run builds so)
ifdef MEMTX_ASSERT
PG_CPPFLAGS += -DUSE_ASSERT_CHECKING
endif

TESTS        = $(sort $(wildcard test/sql/*.sql))
REGRESS      = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --outputdir=test --load-extension=btree_gist
ISOLATION    = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --outputdir=test/output_iso --load-extension=btree_gist

EXTRA_CLEAN = test/results test/regression.diffs test/regression.out test/output_iso

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on the project's headers (PGXS tracks none by default)
$(OBJS): $(HEADERS)

.PHONY: test demo
test:
	bash test/run

demo:
	bash demo/run
