#!/usr/bin/env bash
# Installs a real NetBox 4.7 server for Fleet's tests, CI and demo, into the repository only
# (.tools/netbox-*). Idempotent and cached: a second run only checks stamps (about a second).
#
# Usage: tools/netbox/install.sh [--db NAME] [--static] [--quiet]
#   --db NAME   also make sure database NAME exists (cloned from the migrated template
#               "netbox_template"; default: $NETBOX_DB or "netbox")
#   --static    also run collectstatic (only the web UI needs it; the REST API does not)
#   --quiet     no progress messages
#
# What it does:
#   1. Picks a Python >= 3.12 (NetBox 4.7 requires it): $NETBOX_PYTHON, python3.12/python3.13 on
#      PATH, /root/.pyenv/versions/3.1[2-9]*; otherwise (or with NETBOX_USE_ROOT=1) builds a Debian 13
#      root with debootstrap (.tools/netbox-root, its python3 is 3.13) and runs NetBox in it via chroot.
#   2. Creates the venv and installs tools/netbox/requirements.txt (pinned, --no-deps).
#   3. Writes configuration.py (loopback only, DEBUG off, LOGIN_REQUIRED, generated SECRET_KEY and
#      API token pepper kept in .tools/netbox-state/).
#   4. Creates and migrates the template database, a superuser "admin" and a v2 API token (written to
#      .tools/netbox-state/token), then clones the requested database from the template.
# Needs: PostgreSQL >= 15 on 127.0.0.1:5432 (user postgres, trust auth), Redis on 127.0.0.1:6379, psql.
# Other knobs: see the header of tools/netbox/lib.sh.
set -euo pipefail
# shellcheck source=tools/netbox/lib.sh
. "$(dirname "$0")/lib.sh"

db=${NETBOX_DB:-netbox}
static=0
while [ $# -gt 0 ]; do
  case "$1" in
    --db) [ $# -ge 2 ] || nb_die "--db needs a value"; db=$2; shift 2;;
    --db=*) db=${1#--db=}; shift;;
    --static) static=1; shift;;
    --quiet) NB_QUIET=1; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) nb_die "unknown argument: $1 (see --help)";;
  esac
done
nb_valid_dbname "$db"
[ "$db" != "$NB_TEMPLATE_DB" ] || nb_die "'$NB_TEMPLATE_DB' is the template; pick another database name"

command -v psql >/dev/null || nb_die "psql not found (install postgresql-client)"
mkdir -p "$NB_STATE"
chmod 700 "$NB_STATE"

# Serialise concurrent installs/starts (parallel test runs call start.sh, which calls us).
exec 9>"$NB_STATE/install.lock"
flock 9

# PostgreSQL and Redis: start the machine's services if they are down (the repo's own helper).
if ! pg_isready -q -h "$NB_PGHOST" -p "$NB_PGPORT" 2>/dev/null || ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  [ -x "$NB_REPO/tools/ensure-services.sh" ] && bash "$NB_REPO/tools/ensure-services.sh" >&2 || true
fi
pg_isready -q -h "$NB_PGHOST" -p "$NB_PGPORT" || nb_die "PostgreSQL is not reachable on $NB_PGHOST:$NB_PGPORT"
pgver=$(nb_psql postgres "SHOW server_version_num") || nb_die "cannot connect to PostgreSQL as $NB_PGUSER"
[ "$pgver" -ge 150000 ] || nb_die "NetBox 4.7 needs PostgreSQL >= 15 (found $pgver)"
redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 || nb_die "Redis is not reachable on 127.0.0.1:6379"

# ---------------------------------------------------------------- secrets (generated once)
gen() { # gen LENGTH -> random alphanumeric string
  local out=''
  while [ ${#out} -lt "$1" ]; do out+=$(head -c 256 /dev/urandom | tr -dc 'A-Za-z0-9'); done
  printf '%s' "${out:0:$1}"
}
umask 077
[ -s "$NB_STATE/secret_key" ] || gen 64 >"$NB_STATE/secret_key"
[ -s "$NB_STATE/pepper" ] || gen 64 >"$NB_STATE/pepper"
[ -s "$NB_STATE/admin_password" ] || gen 24 >"$NB_STATE/admin_password"
# The token is ours (NetBox stores only its key and an HMAC of the secret part), so it can be made
# before any database exists and survives re-installs. Format of a NetBox v2 token: nbt_<12>.<40>.
[ -s "$NB_STATE/token" ] || printf 'nbt_%s.%s' "$(gen 12)" "$(gen 40)" >"$NB_STATE/token"
umask 022

# ---------------------------------------------------------------- Python selection
py_ok() {  # a usable interpreter: >= 3.12 with venv/ensurepip and ssl
  "$1" -c 'import sys, ssl, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}
pick_host_python() {
  local c
  if [ -n "${NETBOX_PYTHON:-}" ]; then
    py_ok "$NETBOX_PYTHON" || nb_die "NETBOX_PYTHON=$NETBOX_PYTHON is not a usable Python >= 3.12"
    command -v "$NETBOX_PYTHON"; return 0
  fi
  for c in python3.12 python3.13 /root/.pyenv/versions/3.12*/bin/python3 /root/.pyenv/versions/3.13*/bin/python3 \
           /root/.pyenv/versions/3.1[4-9]*/bin/python3 python3.14 python3; do
    # Resolve pyenv shims to the real interpreter so the venv does not depend on the shim.
    if command -v "$c" >/dev/null 2>&1 && py_ok "$c"; then
      "$c" -c 'import sys; print(sys.executable)'; return 0
    fi
  done
  return 1
}

host_pip_settings() {
  # The machine's pip configuration (indexes, find-links, constraints, cert...) as KEY=VALUE lines,
  # from the config files and PIP_* variables, so pip inside the Debian root uses the same settings.
  local py
  py=$(command -v python3 || true)
  [ -n "$py" ] && "$py" -m pip config list 2>/dev/null | sed -E "s/^[^.]*\.([a-z-]+)='(.*)'$/\1=\2/" | grep -E '^[a-z-]+=' || true
}

build_root() {
  # Debian 13 (trixie) root: python3 3.13, venv, libpq5 (unused with psycopg-binary but cheap), CA certs.
  local partial="$NB_ROOT_DIR.partial" mirror=${NETBOX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  if ! command -v debootstrap >/dev/null; then
    nb_log "installing debootstrap (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2 ||
      { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2; } ||
      nb_die "cannot install debootstrap"
  fi
  grep -q " $partial" /proc/mounts && nb_die "$partial has mounts; unmount them first"
  rm -rf "$partial"
  nb_log "debootstrap trixie into $NB_ROOT_DIR (about a minute)"
  debootstrap --variant=minbase --include=python3,python3-venv,libpq5,ca-certificates \
    trixie "$partial" "$mirror" >"$NB_STATE/debootstrap.log" 2>&1 ||
    nb_die "debootstrap failed, see $NB_STATE/debootstrap.log"
  # debootstrap copies the host resolv.conf; pip inside needs DNS for PyPI.
  cp /etc/resolv.conf "$partial/etc/resolv.conf"
  touch "$partial/.complete"
  grep -q " $NB_ROOT_DIR" /proc/mounts && nb_die "$NB_ROOT_DIR has mounts; unmount them first"
  rm -rf "$NB_ROOT_DIR"
  mv "$partial" "$NB_ROOT_DIR"
}

root_mounts=()
cleanup_mounts() {
  local m i
  for ((i = ${#root_mounts[@]} - 1; i >= 0; i--)); do
    m=${root_mounts[$i]}
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "netbox: warning: could not unmount $m" >&2
  done
  root_mounts=()
}
trap cleanup_mounts EXIT

root_pip_install() {
  # pip inside the chroot with the host's pip settings: written to the root's /etc/pip.conf, and every
  # local path they name (file:// indexes, find-links dirs, constraints, cert) made visible at the same
  # path: files are copied, directories bind-mounted read-only for the duration of the install
  # (a trap unmounts them on any exit).
  local line key val word path
  local -A seen=()
  {
    echo "# Generated by tools/netbox/install.sh from the host's pip configuration."
    echo "[global]"
    while IFS= read -r line; do
      key=${line%%=*}; val=${line#*=}
      # `pip config list` prints PIP_* variables first; they take precedence over files, so keep the first.
      [ -z "${seen[$key]:-}" ] || continue
      seen[$key]=1
      echo "$key = $val"
      for word in $val; do
        path=${word#file://}
        case "$path" in /*) ;; *) continue;; esac
        path=${path%/}
        # A local "simple" index links to its files relatively (../../files/x.whl): share its parent.
        [ "$word" != "${word#file://}" ] && [ "${path##*/}" = simple ] && path=${path%/simple}
        [ -e "$path" ] || continue
        grep -q " $NB_ROOT_DIR$path " /proc/mounts && continue   # already shared
        if [ -d "$path" ]; then
          mkdir -p "$NB_ROOT_DIR$path"
          mount --bind "$path" "$NB_ROOT_DIR$path" && root_mounts+=("$NB_ROOT_DIR$path") &&
            mount -o remount,bind,ro "$NB_ROOT_DIR$path" 2>/dev/null || true
        else
          # Files (constraints, CA bundle) are copied over the root's own: the host's CA bundle may hold
          # the CA of a TLS-intercepting proxy that the root's stock bundle does not trust.
          mkdir -p "$(dirname "$NB_ROOT_DIR$path")"
          cp "$path" "$NB_ROOT_DIR$path"
        fi
      done
    done < <(host_pip_settings)
  } >"$NB_ROOT_DIR/etc/pip.conf"
  cp "$NB_REQS" "$NB_ROOT_DIR/opt/netbox-requirements.txt"
  chroot "$NB_ROOT_DIR" env -i PATH=/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    /opt/netbox-venv/bin/pip install --quiet --disable-pip-version-check --no-deps \
    -r /opt/netbox-requirements.txt 2> >(pip_filter)
  cleanup_mounts
}

# pip warns once per package and local index that lacks it ("Location 'file:///opt/pypi/simple/x/' is
# ignored"); that is expected with partial local mirrors, so drop those lines and keep the rest.
pip_filter() { grep -v "is ignored: it is neither a file nor a directory" >&2 || true; }

reqs_hash=$(nb_requirements_hash | cut -c1-16)
venv_ready() {  # the venv of the recorded mode exists and matches requirements.txt
  nb_load_runtime || return 1
  [ "$(cat "$NB_VENV_HOST/.fleet-stamp" 2>/dev/null)" = "$reqs_hash" ] || return 1
  if [ "$NB_MODE" = root ]; then
    # Prefer the fast path: leave the root once a host Python >= 3.12 shows up (unless forced).
    [ "${NETBOX_USE_ROOT:-0}" = 1 ] || ! pick_host_python >/dev/null || return 1
    [ -f "$NB_ROOT_DIR/.complete" ]
  else
    [ "${NETBOX_USE_ROOT:-0}" != 1 ] && [ -x "$NB_VENV_HOST/bin/python" ] && "$NB_VENV_HOST/bin/python" -c '' 2>/dev/null
  fi
}

if ! venv_ready; then
  hostpy=''
  [ "${NETBOX_USE_ROOT:-0}" = 1 ] || hostpy=$(pick_host_python) || hostpy=''
  if [ -n "$hostpy" ]; then
    nb_log "using $hostpy ($("$hostpy" -c 'import platform; print(platform.python_version())'))"
    printf 'NB_MODE=venv\nNB_PYTHON=%q\n' "$hostpy" >"$NB_STATE/runtime.env"
    nb_load_runtime
    # Reuse an intact venv made by the same interpreter (e.g. when switching back from the root).
    if [ "$(cat "$NB_VENV_HOST/.fleet-stamp" 2>/dev/null)" != "$reqs_hash" ] ||
       [ "$(readlink -f "$("$NB_VENV_HOST/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null)")" != \
         "$(readlink -f "$hostpy")" ]; then
      rm -rf "$NB_VENV_HOST"
      "$hostpy" -m venv "$NB_VENV_HOST"
      nb_log "installing tools/netbox/requirements.txt into $NB_VENV_HOST"
      # The machine's pip settings (extra indexes, constraints) apply as usual; --no-deps because the
      # file is the complete pinned closure (see its header for the psycopg-binary substitution).
      "$NB_VENV_HOST/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$NB_REQS" 2> >(pip_filter)
    fi
  else
    [ "${NETBOX_USE_ROOT:-0}" = 1 ] || nb_log "no Python >= 3.12 on this machine; using a Debian 13 root"
    [ -f "$NB_ROOT_DIR/.complete" ] || build_root
    printf 'NB_MODE=root\nNB_PYTHON=/usr/bin/python3\n' >"$NB_STATE/runtime.env"
    nb_load_runtime
    if [ "$(cat "$NB_VENV_HOST/.fleet-stamp" 2>/dev/null)" != "$reqs_hash" ]; then
      rm -rf "$NB_VENV_HOST"
      chroot "$NB_ROOT_DIR" /usr/bin/python3 -m venv /opt/netbox-venv
      nb_log "installing tools/netbox/requirements.txt into $NB_VENV_HOST (inside the root)"
      root_pip_install
    fi
  fi
  echo "$reqs_hash" >"$NB_VENV_HOST/.fleet-stamp"
fi
nb_load_runtime

# ---------------------------------------------------------------- configuration.py
mkdir -p "$NB_INSTANCE_HOST/conf" "$NB_INSTANCE_HOST/media" "$NB_INSTANCE_HOST/scripts" "$NB_INSTANCE_HOST/reports"
: >"$NB_INSTANCE_HOST/conf/__init__.py"
conf_new=$(cat <<EOF
# Generated by tools/netbox/install.sh; edits are overwritten. Secrets come from .tools/netbox-state/.
# The database name is read from NETBOX_DB_NAME at start-up, so one install serves many databases
# (tools/netbox/start.sh --db NAME). Everything listens on / talks to loopback only.
import os

ALLOWED_HOSTS = ['127.0.0.1', 'localhost', '[::1]', '::1']

DATABASES = {
    'default': {
        'ENGINE': 'django.db.backends.postgresql',
        'NAME': os.environ.get('NETBOX_DB_NAME', 'netbox'),
        'USER': '$NB_PGUSER',
        'PASSWORD': '',
        'HOST': '$NB_PGHOST',
        'PORT': '$NB_PGPORT',
        # Reuse connections for 60 s (lower per-request latency). Servers never run on the template
        # database, so no idle connection can block CREATE DATABASE ... TEMPLATE netbox_template.
        'CONN_MAX_AGE': 60,
    }
}

# Dedicated Redis db numbers so NetBox does not share keys with other users of the local Redis.
REDIS = {
    'tasks': {'HOST': '127.0.0.1', 'PORT': 6379, 'USERNAME': '', 'PASSWORD': '',
              'DATABASE': $NB_REDIS_TASKS_DB, 'SSL': False},
    'caching': {'HOST': '127.0.0.1', 'PORT': 6379, 'USERNAME': '', 'PASSWORD': '',
                'DATABASE': $NB_REDIS_CACHE_DB, 'SSL': False},
}

SECRET_KEY = '$(cat "$NB_STATE/secret_key")'
API_TOKEN_PEPPERS = {1: '$(cat "$NB_STATE/pepper")'}

DEBUG = False
# LOGIN_REQUIRED: NetBox 4.7 defaults to True and warns (FutureWarning) when it is set explicitly,
# so it is left at its default: every UI page and API call needs a login or a token.
TIME_ZONE = 'UTC'
# No outbound traffic: no census, release checks or plugin catalog fetches.
CENSUS_REPORTING_ENABLED = False
ISOLATED_DEPLOYMENT = True
RELEASE_CHECK_URL = None
# Test runs page through large lists; match NetBox defaults explicitly so they are visible here.
PAGINATE_COUNT = 50
MAX_PAGE_SIZE = 1000
EOF
)
conf_file="$NB_INSTANCE_HOST/conf/configuration.py"
if [ "$(cat "$conf_file" 2>/dev/null)" != "$conf_new" ]; then
  umask 077; printf '%s\n' "$conf_new" >"$conf_file"; umask 022
  [ "$NB_MODE" != root ] || chmod 600 "$conf_file"
fi

# ---------------------------------------------------------------- template database
# Stamp = requirements + token + password + pepper: any change re-runs migrate and the token snippet.
# (configuration.py changes need no migration.)
tmpl_stamp=$(cat "$NB_VENV_HOST/.fleet-stamp" "$NB_STATE/token" "$NB_STATE/admin_password" "$NB_STATE/pepper" | sha256sum | cut -c1-16)
if [ "$(cat "$NB_STATE/template.stamp" 2>/dev/null)" != "$tmpl_stamp" ] || ! nb_db_exists "$NB_TEMPLATE_DB"; then
  nb_db_exists "$NB_TEMPLATE_DB" || nb_psql postgres "CREATE DATABASE $NB_TEMPLATE_DB"
  # An empty template starts from the migrations' result, where there is one for these requirements: seconds
  # instead of minutes. The migrate below then finds nothing, or only what the dump lacks, to apply.
  if [ "$(nb_psql "$NB_TEMPLATE_DB" "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")" = 0 ]; then
    nb_restore_schema "$NB_TEMPLATE_DB"
  fi
  nb_migrate "$NB_TEMPLATE_DB" "$NB_STATE/migrate.log"
  nb_log "creating superuser admin and the API token"
  nb_ensure_token "$NB_TEMPLATE_DB"
  # Mark it as a template: clones need no superuser, and it cannot be dropped by accident.
  nb_psql postgres "ALTER DATABASE $NB_TEMPLATE_DB WITH IS_TEMPLATE true" >/dev/null
  echo "$tmpl_stamp" >"$NB_STATE/template.stamp"
fi

# ---------------------------------------------------------------- requested database
nb_ensure_db "$db"

if [ "$static" = 1 ]; then
  static_stamp="$tmpl_stamp"
  if [ "$(cat "$NB_INSTANCE_HOST/static/.fleet-stamp" 2>/dev/null)" != "$static_stamp" ]; then
    nb_log "collecting static files"
    nb_netbox "$db" collectstatic --no-input >/dev/null
    echo "$static_stamp" >"$NB_INSTANCE_HOST/static/.fleet-stamp"
  fi
fi

nb_log "ready: mode=$NB_MODE python=$NB_PYTHON db=$db token=$NB_STATE/token"
