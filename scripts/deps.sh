#!/usr/bin/env bash
# Installs the Debian 12 packages memtx needs to build, test and demo, and
# pgvector (the `vector` extension memtx_vector requires, SPEC §19).
# Idempotent: installs only what is missing.  Needs root (or sudo).
set -euo pipefail

pkgs=(postgresql-15 postgresql-contrib postgresql-server-dev-15 postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl libipc-run-perl make gcc python3-psycopg
      python3-psycopg-pool python3-pip python3-pytest python3-jsonschema python3-hypothesis
      sqlsmith postgresql-15-plproxy)
# the Node client and memtx-mcp need node >= 20 and npm (Debian's, unless a node is on PATH)
command -v node >/dev/null || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# pgvector >= 0.8.0 (iterative index scans).  Debian 12's own archive has no
# pgvector: the PostgreSQL project's apt repository ships it as
# postgresql-15-pgvector, installed when that repository is configured.
# Otherwise it is built from the source tarball kept beside the repository
# (../shared/vendor, relative to the checkout's parent directory) or named by
# MEMTX_PGVECTOR_TARBALL.  memtx itself never needs it; memtx_vector does.
pg_config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
pgvector_version() {
    sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$("$pg_config" --sharedir)/extension/vector.control" 2>/dev/null
}
pgvector_recent() {
    local v; v=$(pgvector_version)
    [ -n "$v" ] && printf '0.8.0\n%s\n' "$v" | sort -V -C
}
pgvector_recent && exit 0

if apt-cache show postgresql-15-pgvector >/dev/null 2>&1; then
    echo "installing: postgresql-15-pgvector" >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
        postgresql-15-pgvector >/dev/null
    pgvector_recent && exit 0
fi

top=$(cd "$(dirname "$0")/.." && pwd)
tarball=${MEMTX_PGVECTOR_TARBALL:-}
if [ -z "$tarball" ]; then
    for t in "$(dirname "$top")"/shared/vendor/pgvector-*.tar.gz; do
        [ -e "$t" ] && tarball=$t
    done
fi
if [ -z "$tarball" ] || [ ! -r "$tarball" ]; then
    cat >&2 <<MSG
scripts/deps.sh: pgvector >= 0.8.0 is not installed (found: $(pgvector_version || true))
  and neither source of it is available here:
  - the package postgresql-15-pgvector (configure the PostgreSQL project's apt
    repository, then: apt install postgresql-15-pgvector), or
  - pgvector's source tarball, at $(dirname "$top")/shared/vendor/pgvector-<version>.tar.gz
    or named by MEMTX_PGVECTOR_TARBALL.
memtx builds and runs without it; memtx_vector and its tests need it (they
report themselves skipped without it, and fail in CI).
MSG
    exit 0
fi
echo "building pgvector from $(basename "$tarball")" >&2
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
tar xzf "$tarball" -C "$build"
src=$(find "$build" -mindepth 1 -maxdepth 1 -type d | head -1)
make -s -C "$src" PG_CONFIG="$pg_config" >/dev/null
"${sudo[@]}" make -s -C "$src" PG_CONFIG="$pg_config" install >/dev/null
pgvector_recent || { echo "scripts/deps.sh: pgvector installed from $tarball is older than 0.8.0" >&2; exit 1; }
