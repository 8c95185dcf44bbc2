#!/bin/sh
# Runs once, when the postgres service initialises an empty data volume (docker-entrypoint-initdb.d): one login role
# per consumer, each with its password from a compose secret, and the databases they own. Temporal's two databases
# are created by temporal-sql-tool in the temporal-schema service, hence CREATEDB for its role. The image's entrypoint
# sources this file unless it is executable (its own shell runs with set -e, and set -u would break it), so no -u.
set -e
role() {
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v name="$1" -v pw="$(cat "$2")" <<'SQL'
CREATE ROLE :"name" LOGIN PASSWORD :'pw';
SQL
}
role fleet /run/secrets/fleet-db-password
role netbox /run/secrets/netbox-db-password
role temporal /run/secrets/temporal-db-password
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres <<'SQL'
ALTER ROLE temporal CREATEDB;
CREATE DATABASE fleet OWNER fleet;
CREATE DATABASE netbox OWNER netbox;
SQL
