#!/bin/sh
# Docker's _FILE convention for images without it: for each NAME_FILE in the environment that names a compose secret
# (a file in /run/secrets), exports NAME with the file's contents, then runs the command. Passwords stay out of
# production.yml and out of `docker inspect`; node-postgres reads PGPASSWORD, the Temporal server POSTGRES_PWD,
# temporal-sql-tool SQL_PASSWORD.
set -eu
for name in $(env | sed -n 's|^\([A-Z][A-Z0-9_]*\)_FILE=/run/secrets/.*|\1|p'); do
  file=$(printenv "${name}_FILE")
  value=$(cat "$file")
  export "$name=$value"
  unset "${name}_FILE"
done
exec "$@"
