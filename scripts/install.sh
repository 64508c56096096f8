#!/usr/bin/env bash
# Builds memtx and installs it into the PostgreSQL 15 found by pg_config.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
make -s PG_CONFIG="$PG_CONFIG"
if [ "$(id -u)" -eq 0 ]; then
    make -s install PG_CONFIG="$PG_CONFIG"
else
    sudo make -s install PG_CONFIG="$PG_CONFIG"
fi
