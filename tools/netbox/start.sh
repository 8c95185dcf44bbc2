#!/usr/bin/env bash
# Starts a real NetBox server on 127.0.0.1 in the background and prints one JSON line:
#   {"url":"http://127.0.0.1:8001","token":"nbt_....","pid":1234,"db":"netbox"}
# Send the token as "Authorization: Bearer <token>" (NetBox v2 token). The pid is the gunicorn master.
#
# Usage: tools/netbox/start.sh [--port N] [--db NAME] [--fresh] [--workers N] [--threads N]
#   --port N     TCP port on 127.0.0.1 (default: $NETBOX_PORT or 8001)
#   --db NAME    database to serve (default: $NETBOX_DB or "netbox"). Missing databases are cloned from the
#                migrated template (CREATE DATABASE NAME TEMPLATE netbox_template, well under a second), so
#                a test run can use e.g. --db netbox_test_$RANDOM and get an empty NetBox with the same token.
#   --fresh      drop NAME first if it exists, so the server starts from an empty clone (not for "netbox")
#   --workers N  gunicorn worker processes (default: $NETBOX_WORKERS or 2)
#   --threads N  threads per worker (default: $NETBOX_THREADS or 4)
# If a server from these scripts already runs on the port with the same database, its JSON is printed
# again and nothing is started. Runs tools/netbox/install.sh first (cached: about a second; the very
# first install takes minutes). Stop with tools/netbox/stop.sh --port N. Log: .tools/netbox-state/<port>.log
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/netbox/lib.sh
. "$here/lib.sh"

port=${NETBOX_PORT:-8001}
db=${NETBOX_DB:-netbox}
fresh=0
workers=${NETBOX_WORKERS:-2}
threads=${NETBOX_THREADS:-4}
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || nb_die "--port needs a value"; port=$2; shift 2;;
    --port=*) port=${1#--port=}; shift;;
    --db) [ $# -ge 2 ] || nb_die "--db needs a value"; db=$2; shift 2;;
    --db=*) db=${1#--db=}; shift;;
    --fresh) fresh=1; shift;;
    --workers) workers=${2:?--workers needs a value}; shift 2;;
    --threads) threads=${2:?--threads needs a value}; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) nb_die "unknown argument: $1 (see --help)";;
  esac
done
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || nb_die "invalid port '$port'"
[[ "$workers" =~ ^[1-9][0-9]*$ && "$threads" =~ ^[1-9][0-9]*$ ]] || nb_die "--workers/--threads must be positive integers"
nb_valid_dbname "$db"
[ "$db" != "$NB_TEMPLATE_DB" ] || nb_die "never serve the template database (clones would fail while it is in use)"
command -v curl >/dev/null || nb_die "curl not found"

url="http://127.0.0.1:$port"
pidfile="$NB_STATE/$port.pid"
json() { printf '{"url":"%s","token":"%s","pid":%s,"db":"%s"}\n' "$url" "$(cat "$NB_STATE/token")" "$1" "$db"; }
api_ok() { curl -fsS -o /dev/null --max-time 5 -H "Authorization: Bearer $(cat "$NB_STATE/token")" \
  -H 'Accept: application/json' "$url/api/status/" 2>/dev/null; }

# Already running on this port?
if [ -f "$pidfile" ]; then
  oldpid=$(cat "$pidfile")
  if kill -0 "$oldpid" 2>/dev/null && grep -qa gunicorn "/proc/$oldpid/cmdline" 2>/dev/null; then
    if [ "$(cat "$NB_STATE/$port.db" 2>/dev/null)" = "$db" ] && [ "$fresh" = 0 ] && api_ok; then
      json "$oldpid"; exit 0
    fi
    nb_die "a NetBox server (pid $oldpid, db $(cat "$NB_STATE/$port.db" 2>/dev/null)) already runs on port $port; stop it with tools/netbox/stop.sh --port $port"
  fi
  rm -f "$pidfile" "$NB_STATE/$port.db"   # stale
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  nb_die "port $port on 127.0.0.1 is already in use by another program"
fi

if [ "$fresh" = 1 ]; then
  [ "$db" != netbox ] || nb_die "--fresh refuses to drop the default database 'netbox'"
  mkdir -p "$NB_STATE"
  if nb_db_exists "$db" 2>/dev/null; then
    nb_log "dropping database $db (--fresh)"
    nb_psql postgres "DROP DATABASE \"$db\" WITH (FORCE)" >/dev/null
  fi
fi

# Install (cached) and make sure the database exists (cloned from the template if missing).
NB_QUIET=1 bash "$here/install.sh" --db "$db" --quiet
nb_load_runtime || nb_die "install did not record a runtime (.tools/netbox-state/runtime.env)"

# gunicorn is one of NetBox's own dependencies; --preload imports Django once in the master so both
# workers are ready as soon as it is. Access log off: tests make thousands of requests. Keep-alive outlasts
# clients' idle timeouts (undici keeps an idle socket 4 s; gunicorn's default is 2 s), so no client sends a
# request on a socket the server is closing ("other side closed").
log="$NB_STATE/$port.log"
: >"$log"
NB_RUN_ENV=("NETBOX_PORT=$port")
nb_cmd "$db" gunicorn netbox.wsgi:application \
  --bind "127.0.0.1:$port" --workers "$workers" --threads "$threads" --worker-class gthread \
  --timeout 120 --graceful-timeout 10 --keep-alive 75 --preload --no-control-socket --worker-tmp-dir /dev/shm \
  --error-logfile - --log-level warning
NB_RUN_ENV=()
# setsid: its own session, so the server outlives the caller's shell and terminal signals. setsid does
# not fork here (a background job is not a group leader), and env/chroot exec: $! is gunicorn's pid.
setsid "${NB_CMD[@]}" </dev/null >>"$log" 2>&1 &
pid=$!
echo "$pid" >"$pidfile"
echo "$db" >"$NB_STATE/$port.db"

# Wait until the API answers with our token (Django import + URLconf load take a few seconds).
started=$SECONDS
deadline=$((SECONDS + ${NETBOX_START_TIMEOUT:-90}))
next_note=$((SECONDS + 10))
nb_log "started gunicorn (pid $pid) on $url; waiting for its API (log: $log)"
until api_ok; do
  if [ $SECONDS -ge $next_note ]; then
    next_note=$((SECONDS + 10))
    nb_log "  still starting after $((SECONDS - started)) s (importing NetBox, building its GraphQL schema)"
  fi
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$pidfile" "$NB_STATE/$port.db"
    tail -40 "$log" >&2
    nb_die "NetBox exited during start-up (log: $log)"
  fi
  if [ $SECONDS -ge $deadline ]; then
    tail -40 "$log" >&2
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile" "$NB_STATE/$port.db"
    nb_die "NetBox did not answer $url/api/status/ within ${NETBOX_START_TIMEOUT:-90}s (log: $log)"
  fi
  sleep 0.3
done
nb_log "API answers after $((SECONDS - started)) s"
json "$pid"
