# shellcheck shell=bash
# Shared helpers for tools/netbox/{install,start,stop}.sh. Sourced, never executed.
#
# Layout (all under the repository's .tools/, which is git-ignored):
#   .tools/netbox-venv/          venv (fast path: a host Python >= 3.12)
#   .tools/netbox-root/          Debian 13 root made by debootstrap (fallback path); it holds
#                                its own venv at /opt/netbox-venv and instance at /opt/netbox-instance
#   .tools/netbox-state/         secrets, token, stamps, pid files and logs:
#       secret_key, pepper       generated once; baked into configuration.py
#       admin_password           password of the NetBox superuser "admin"
#       token                    the API token, "nbt_<key>.<secret>" (send as "Authorization: Bearer <token>")
#       runtime.env              which Python/mode install.sh chose (sourced by start.sh)
#       instance/                NETBOX_ROOT in venv mode (conf/configuration.py, media/, ...)
#       <port>.pid <port>.db <port>.log   one running server per port
#
# Environment knobs (all optional):
#   NETBOX_PYTHON        force this interpreter (must be >= 3.12) for the venv
#   NETBOX_USE_ROOT=1    skip host Pythons and use the debootstrap fallback
#   NETBOX_DEBIAN_MIRROR mirror for debootstrap (default http://deb.debian.org/debian)
#   NETBOX_PGHOST/NETBOX_PGPORT/NETBOX_PGUSER   PostgreSQL (default 127.0.0.1/5432/postgres)
#   NETBOX_REDIS_TASKS_DB / NETBOX_REDIS_CACHE_DB  Redis db numbers (default 6 / 7)

NB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NB_TOOLS="$NB_REPO/.tools"
NB_STATE="$NB_TOOLS/netbox-state"
NB_ROOT_DIR="$NB_TOOLS/netbox-root"
NB_REQS="$NB_REPO/tools/netbox/requirements.txt"
NB_TEMPLATE_DB=netbox_template
NB_PGHOST=${NETBOX_PGHOST:-127.0.0.1}
NB_PGPORT=${NETBOX_PGPORT:-5432}
NB_PGUSER=${NETBOX_PGUSER:-postgres}
NB_REDIS_TASKS_DB=${NETBOX_REDIS_TASKS_DB:-6}
NB_REDIS_CACHE_DB=${NETBOX_REDIS_CACHE_DB:-7}
NB_RUN_ENV=()

nb_die() { echo "netbox: error: $*" >&2; exit 1; }
nb_log() { [ "${NB_QUIET:-0}" = 1 ] || echo "netbox: $*" >&2; }

# Only loopback is allowed for the services NetBox talks to (project rule).
case "$NB_PGHOST" in 127.*|localhost|::1) ;; *) nb_die "NETBOX_PGHOST must be a loopback address (got $NB_PGHOST)";; esac

nb_psql() {  # nb_psql DB SQL  -> tuples only, unaligned
  psql -X -v ON_ERROR_STOP=1 -qtA -h "$NB_PGHOST" -p "$NB_PGPORT" -U "$NB_PGUSER" -d "$1" -c "$2"
}

nb_valid_dbname() {
  # Database names are interpolated into SQL; keep them to a safe identifier shape.
  [[ "$1" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || nb_die "invalid database name '$1' (use [a-z_][a-z0-9_]*, max 63 chars)"
}

nb_db_exists() { [ "$(nb_psql postgres "SELECT 1 FROM pg_database WHERE datname = '$1'")" = 1 ]; }

# Fingerprint of the applied migrations; equal fingerprints mean "same schema".
nb_migrations_fp() {
  nb_psql "$1" "SELECT md5(coalesce(string_agg(app || '.' || name, ',' ORDER BY app, name), '')) FROM django_migrations" 2>/dev/null || echo none
}

# Load the mode chosen by install.sh: NB_MODE=venv|root.
nb_load_runtime() {
  [ -f "$NB_STATE/runtime.env" ] || return 1
  # shellcheck disable=SC1091
  . "$NB_STATE/runtime.env"
  if [ "$NB_MODE" = root ]; then
    NB_VENV_RUN=/opt/netbox-venv            # paths as seen by the NetBox process (inside the chroot)
    NB_INSTANCE_RUN=/opt/netbox-instance
    NB_INSTANCE_HOST="$NB_ROOT_DIR$NB_INSTANCE_RUN"
    NB_VENV_HOST="$NB_ROOT_DIR$NB_VENV_RUN"
  else
    NB_VENV_RUN="$NB_TOOLS/netbox-venv"
    NB_INSTANCE_RUN="$NB_STATE/instance"
    NB_INSTANCE_HOST="$NB_INSTANCE_RUN"
    NB_VENV_HOST="$NB_VENV_RUN"
  fi
}

# Run a program from the NetBox venv with a clean environment (no host PYTHONPATH, pyenv or
# virtualenv variables leaking in). NETBOX_DB_NAME selects the database (read by configuration.py).
# In root mode the program runs inside the Debian root via chroot; it shares the host network,
# so PostgreSQL and Redis on 127.0.0.1 are reachable. chroot and env exec, so the pid is kept.
nb_cmd() {  # nb_cmd DBNAME PROGRAM ARGS...  -> the command line in the array NB_CMD
  local db=$1 prog=$2; shift 2
  local home=${HOME:-/root}
  [ "$NB_MODE" = root ] && home=/root
  NB_CMD=(env -i "PATH=$NB_VENV_RUN/bin:/usr/local/bin:/usr/bin:/bin" "HOME=$home"
    LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONUNBUFFERED=1 "NETBOX_ROOT=$NB_INSTANCE_RUN" "NETBOX_DB_NAME=$db"
    "${NB_RUN_ENV[@]}" "$NB_VENV_RUN/bin/$prog" "$@")
  if [ "$NB_MODE" = root ]; then
    NB_CMD=(chroot "$NB_ROOT_DIR" "${NB_CMD[@]}")
  fi
}
nb_run() {  # nb_run DBNAME PROGRAM ARGS...   (extra VAR=value pairs may be put in NB_RUN_ENV)
  nb_cmd "$@"
  "${NB_CMD[@]}"
}

nb_netbox() { local db=$1; shift; nb_run "$db" netbox "$@"; }

# Make sure database $1 exists and is migrated, cloning the template when it is missing.
# The clone carries the superuser and the API token (they live in the database).
nb_ensure_db() {
  local db=$1 tries=0 out
  nb_valid_dbname "$db"
  if ! nb_db_exists "$db"; then
    nb_log "creating database $db from template $NB_TEMPLATE_DB"
    # CREATE DATABASE ... TEMPLATE fails while another session is connected to the template
    # (e.g. a concurrent clone racing with a migrate); retry briefly.
    until out=$(nb_psql postgres "CREATE DATABASE \"$db\" TEMPLATE $NB_TEMPLATE_DB" 2>&1); do
      if nb_db_exists "$db"; then break; fi   # someone else created it concurrently
      tries=$((tries + 1))
      [ $tries -lt 20 ] || nb_die "cannot clone $NB_TEMPLATE_DB into $db: $out"
      sleep 0.5
    done
    return 0
  fi
  # Existing database: migrate only if its schema differs from the template's (e.g. after a
  # NetBox upgrade), so the common case costs two cheap queries.
  if [ "$(nb_migrations_fp "$db")" != "$(nb_migrations_fp "$NB_TEMPLATE_DB")" ]; then
    nb_log "migrating existing database $db"
    nb_netbox "$db" migrate --no-input >&2
    nb_ensure_token "$db"
  fi
}

# Create (or repair) the superuser "admin" and the v2 API token stored in .tools/netbox-state/token.
# NetBox 4.7 has no management command for tokens, so this runs a Django shell snippet. The token
# plaintext and key are generated by us (so the file can be written before the database is touched
# and stays the same across re-installs); NetBox only stores key + HMAC(pepper, plaintext).
nb_ensure_token() {
  local db=$1 token key secret
  token=$(cat "$NB_STATE/token")
  key=${token#nbt_}; key=${key%%.*}; secret=${token#*.}
  NB_RUN_ENV=("NB_ADMIN_PASSWORD=$(cat "$NB_STATE/admin_password")" "NB_TOKEN_KEY=$key" "NB_TOKEN_SECRET=$secret")
  nb_run_snippet "$db" "$(cat <<'PY'
import os
from users.models import Token, User
pw, key, secret = os.environ['NB_ADMIN_PASSWORD'], os.environ['NB_TOKEN_KEY'], os.environ['NB_TOKEN_SECRET']
user = User.objects.filter(username='admin').first()
if user is None:
    user = User.objects.create_superuser('admin', 'admin@localhost', pw)
elif not (user.is_superuser and user.is_active and user.check_password(pw)):
    user.is_superuser = user.is_staff = user.is_active = True
    user.set_password(pw)
    user.save()
tok = Token.objects.filter(key=key).first()
if tok is not None and not (tok.user_id == user.pk and tok.enabled and tok.write_enabled and tok.expires is None
                            and tok.validate(secret)):
    tok.delete()  # stale (e.g. pepper changed): recreate below
    tok = None
if tok is None:
    tok = Token(user=user, key=key, token=secret, description='Fleet dev/test token (tools/netbox)')
    tok.full_clean()
    tok.save()
print('token ok', tok.pk)
PY
)"
  NB_RUN_ENV=()
}

# Run a Python snippet in NetBox's Django shell (output goes to stderr, it is diagnostics only).
nb_run_snippet() {
  nb_run "$1" netbox shell --no-imports -c "$2" >&2
}

# Reads `netbox migrate` output and reports how far it is every 20 s: one migration can run for minutes, and
# a line arrives only when it ends. A partial line read at a timeout is the migration still running.
migrate_progress() {  # migrate_progress TOTAL
  local total=$1 applied=0 current='' line rc last=$SECONDS
  while :; do
    line=''
    IFS= read -r -t 5 line && rc=0 || rc=$?
    case "$line" in *Applying*) applied=$((applied + 1)); current=${line#*Applying }; current=${current%%...*};; esac
    [ "$rc" -eq 0 ] || [ "$rc" -gt 128 ] || break   # end of input
    if [ $((SECONDS - last)) -ge 20 ]; then
      last=$SECONDS
      nb_log "  $applied of $total migrations applied, now ${current:-starting}"
    fi
  done
  nb_log "  $applied of $total migrations applied"
}

# Applies database $1's pending migrations, reporting progress; the whole output goes to the file $2.
nb_migrate() {  # nb_migrate DB LOGFILE
  local db=$1 log=$2 total
  total=$(nb_netbox "$db" showmigrations --plan 2>/dev/null | grep -c '^\[ \]' || true)
  nb_log "migrating $db: $total migrations to apply (log: $log)"
  nb_netbox "$db" migrate --no-input 2>&1 | tee "$log" | migrate_progress "$total" ||
    { tail -30 "$log" >&2; nb_die "migrate of $db failed, see $log"; }
}

nb_requirements_hash() { sha256sum "$NB_REQS" | cut -c1-64; }

# The schema as NetBox's migrations leave it, for the pinned requirements (tools/netbox/dump-schema.sh makes it).
NB_SCHEMA_DUMP="$NB_REPO/tools/netbox/schema.sql.gz"
NB_SCHEMA_STAMP="$NB_REPO/tools/netbox/schema.requirements-sha256"

# Restores NB_SCHEMA_DUMP into the empty database $1 if it was made for these requirements, in one transaction (a
# killed install leaves the database empty, not half made); otherwise says why the migrations will run in full.
nb_restore_schema() {  # nb_restore_schema DB
  if [ "$(cat "$NB_SCHEMA_STAMP" 2>/dev/null)" != "$(nb_requirements_hash)" ]; then
    nb_log "tools/netbox/schema.sql.gz was made for other requirements: all migrations run (about 10 minutes)"
    return 0
  fi
  nb_log "restoring $1 from tools/netbox/schema.sql.gz"
  # Without the \restrict lines of a newer pg_dump (older psql refuses them; the dump is ours, not a stranger's) and
  # pg_dump 17's transaction_timeout (servers before 17 refuse it).
  gunzip -c "$NB_SCHEMA_DUMP" | sed -e '/^\\restrict /d' -e '/^\\unrestrict /d' -e '/^SET transaction_timeout/d' |
    PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 --single-transaction \
      -h "$NB_PGHOST" -p "$NB_PGPORT" -U "$NB_PGUSER" -d "$1" >/dev/null 2>"$NB_STATE/restore.log" ||
    nb_log "the restore failed ($(tail -1 "$NB_STATE/restore.log")): all migrations run (about 10 minutes)"
}
