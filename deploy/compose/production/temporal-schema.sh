#!/bin/sh
# Creates (when missing) and migrates Temporal's two Postgres databases with the admin-tools image's own schema files:
# create, setup-schema (version 0.0, a no-op on a set-up database) and update-schema to the image's latest version.
# Run on every `docker compose up`; after a Temporal upgrade the new admin-tools image brings the new versions.
set -eu
schema=/etc/temporal/schema/postgresql/v12
for db in temporal temporal_visibility; do
  dir=temporal
  [ "$db" = temporal_visibility ] && dir=visibility
  tool() { temporal-sql-tool --plugin postgres12 --ep postgres --port 5432 --user temporal --db "$db" "$@"; }
  tool create 2>/dev/null || echo "database $db exists"
  tool setup-schema -v 0.0
  tool update-schema -d "$schema/$dir/versioned"
done
