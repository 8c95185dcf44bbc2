#!/usr/bin/env bash
# Stops a NetBox server started by tools/netbox/start.sh.
#
# Usage: tools/netbox/stop.sh [--port N] [--drop-db] [--all]
#   --port N    port the server listens on (default: $NETBOX_PORT or 8001)
#   --drop-db   also drop the database it served (for throw-away test databases; never drops
#               "netbox" or the template)
#   --all       stop every server recorded in .tools/netbox-state/*.pid (with --drop-db: drop theirs too)
# Stopping a server that is not running is not an error (idempotent).
set -euo pipefail
# shellcheck source=tools/netbox/lib.sh
. "$(dirname "$0")/lib.sh"

port=${NETBOX_PORT:-8001}
drop=0
all=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) [ $# -ge 2 ] || nb_die "--port needs a value"; port=$2; shift 2;;
    --port=*) port=${1#--port=}; shift;;
    --drop-db) drop=1; shift;;
    --all) all=1; shift;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0;;
    *) nb_die "unknown argument: $1 (see --help)";;
  esac
done

stop_port() {
  local port=$1 pidfile="$NB_STATE/$1.pid" pid db i
  [[ "$port" =~ ^[0-9]+$ ]] || nb_die "invalid port '$port'"
  db=$(cat "$NB_STATE/$port.db" 2>/dev/null || true)
  if [ -f "$pidfile" ]; then
    pid=$(cat "$pidfile")
    # Only signal our own gunicorn master: the pid may have been reused since start.sh wrote it.
    if kill -0 "$pid" 2>/dev/null && grep -qa gunicorn "/proc/$pid/cmdline" 2>/dev/null; then
      kill -TERM "$pid"   # gunicorn master: graceful shutdown of its workers
      for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
      if kill -0 "$pid" 2>/dev/null; then
        echo "netbox: pid $pid ignored SIGTERM for 15s; sending SIGKILL" >&2
        pkill -KILL -P "$pid" 2>/dev/null || true   # its workers (children of this pid only)
        kill -KILL "$pid" 2>/dev/null || true
      fi
      echo "netbox: stopped server on port $port (pid $pid)" >&2
    else
      echo "netbox: no running server on port $port (stale pid file removed)" >&2
    fi
    rm -f "$pidfile" "$NB_STATE/$port.db"
  else
    echo "netbox: no server recorded on port $port" >&2
  fi
  if [ "$drop" = 1 ] && [ -n "$db" ]; then
    case "$db" in
      netbox|"$NB_TEMPLATE_DB") echo "netbox: not dropping database $db (protected)" >&2;;
      *) nb_valid_dbname "$db"
         nb_psql postgres "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null
         echo "netbox: dropped database $db" >&2;;
    esac
  fi
}

if [ "$all" = 1 ]; then
  shopt -s nullglob
  for f in "$NB_STATE"/*.pid; do p=${f##*/}; stop_port "${p%.pid}"; done
else
  stop_port "$port"
fi
