#!/usr/bin/env bash
# Builds memtx and installs it into the PostgreSQL 15 found by pg_config.
#
#   MEMTX_ASSERT=1 bash scripts/install.sh   # with assertions (what test/run does)
#   MEMTX_DESTDIR=/tmp/x bash scripts/install.sh
#                                  # into a private tree, loaded through Debian's
#                                  # extension_destdir (see test/run)
#
# The build flavour (with or without assertions) is kept in .build-flavour;
# a different flavour than the last build's rebuilds from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
flavour=release
args=()
if [ -n "${MEMTX_ASSERT:-}" ]; then flavour=assert; args=(MEMTX_ASSERT=1); fi
if [ "$(cat .build-flavour 2>/dev/null)" != "$flavour" ]; then
    make -s clean PG_CONFIG="$PG_CONFIG"
    echo "$flavour" >.build-flavour
fi
make -s PG_CONFIG="$PG_CONFIG" "${args[@]}"
if [ -n "${MEMTX_DESTDIR:-}" ]; then
    make -s install PG_CONFIG="$PG_CONFIG" "${args[@]}" DESTDIR="$MEMTX_DESTDIR"
    chmod -R a+rX "$MEMTX_DESTDIR"
elif [ "$(id -u)" -eq 0 ]; then
    make -s install PG_CONFIG="$PG_CONFIG" "${args[@]}"
else
    sudo make -s install PG_CONFIG="$PG_CONFIG" "${args[@]}"
fi
