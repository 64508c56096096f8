#!/usr/bin/env bash
# Installs the Debian 12 packages memtx needs to build, test and demo.
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
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
echo "installing: ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
