#!/usr/bin/env bash
# Writes tools/netbox/schema.sql.gz: the database exactly as `netbox migrate` leaves a new one for the pinned
# tools/netbox/requirements.txt (tables, NetBox's seeded rows, the django_migrations ledger; no user, no token), and
# tools/netbox/schema.requirements-sha256, the hash of the requirements it was made with. install.sh restores it
# into the template database instead of running the ~340 migrations (over 11 minutes on a 2-core CI host), then
# runs `netbox migrate` over it, which applies whatever the dump lacks. Run it after changing requirements.txt;
# until then install.sh ignores a dump whose stamp does not match and migrates from scratch.
#
# Usage: bash tools/netbox/dump-schema.sh   (after tools/netbox/install.sh; about as long as one full migrate)
set -euo pipefail
# shellcheck source=tools/netbox/lib.sh
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
nb_load_runtime || nb_die "run tools/netbox/install.sh first"
[ "$(cat "$NB_VENV_HOST/.fleet-stamp" 2>/dev/null)" = "$(nb_requirements_hash | cut -c1-16)" ] ||
  nb_die "the NetBox venv was made for other requirements: run tools/netbox/install.sh first"
# No install may replace the venv while its migrations run here.
exec 9>"$NB_STATE/install.lock"
flock 9
scratch=netbox_schema_dump
PGOPTIONS="-c client_min_messages=warning" nb_psql postgres "DROP DATABASE IF EXISTS $scratch"
nb_psql postgres "CREATE DATABASE $scratch"
trap 'rm -f "$NB_SCHEMA_DUMP.tmp"; nb_psql postgres "DROP DATABASE IF EXISTS $scratch" >/dev/null' EXIT
nb_migrate "$scratch" "$NB_STATE/dump-schema-migrate.log"
# Plain SQL without owners or grants, which install.sh restores as whichever user runs it. The migrations' applied
# times differ from run to run, so a new dump of the same schema differs a little from the last.
pg_dump -h "$NB_PGHOST" -p "$NB_PGPORT" -U "$NB_PGUSER" --no-owner --no-privileges -d "$scratch" |
  gzip -9n >"$NB_SCHEMA_DUMP.tmp"
mv "$NB_SCHEMA_DUMP.tmp" "$NB_SCHEMA_DUMP"
nb_requirements_hash >"$NB_SCHEMA_STAMP"
nb_log "wrote $NB_SCHEMA_DUMP ($(stat -c %s "$NB_SCHEMA_DUMP") bytes) for requirements $(cut -c1-16 "$NB_SCHEMA_STAMP")"
