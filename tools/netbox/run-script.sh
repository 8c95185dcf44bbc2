#!/usr/bin/env bash
# Runs a Python script inside NetBox's Django environment (its ORM, models and settings)
# against one database: bulk loads for benchmarks, where the REST API writes a few
# objects a second. Extra KEY=VALUE pairs after the script are passed as environment.
# Usage: tools/netbox/run-script.sh --db NAME SCRIPT.py [KEY=VALUE ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/netbox/lib.sh
. "$here/lib.sh"
db=""
[ "${1:-}" = "--db" ] || nb_die "usage: run-script.sh --db NAME SCRIPT.py [KEY=VALUE ...]"
db=$2; script=$3; shift 3
[ -f "$script" ] || nb_die "no script $script"
nb_load_runtime || nb_die "NetBox is not installed: run tools/netbox/install.sh"
[ "$NB_MODE" = venv ] || nb_die "run-script.sh needs the venv install (host paths); NB_MODE=$NB_MODE"
nb_ensure_db "$db"
NB_RUN_ENV=("$@")
nb_run "$db" netbox shell --no-imports -c "exec(open('$(realpath "$script")').read())"
