#!/usr/bin/env bash
# Stops the dev stack that tools/up.sh started, and everything it started: the simulator, hub, NetBox agent,
# workflow agent, satellite, the Temporal dev server, the burn-in SLURM cluster and NetBox (gunicorn master and workers). Stopping a stack
# that is not running is not an error. Its state (database fleet_dev, NetBox's netbox_dev, .run/dev) is kept.
#
# Usage: tools/down.sh [--after PID]
#   --after PID  wait until process PID (the dev stack) has exited, then stop what it left behind; the dev
#                stack starts this itself, so even a SIGKILLed stack leaves nothing running.
#
# The dev stack records each process as .run/dev/pids/<name>.pid ("<pid> <text its command line contains>");
# a recorded pid whose command line no longer contains that text is another program's and is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.run/dev
netbox_port=8001
after=''
while [ $# -gt 0 ]; do
  case "$1" in
    --after) [ $# -ge 2 ] || { echo "down: --after needs a pid" >&2; exit 2; }; after=$2; shift 2;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
    *) echo "down: unknown argument: $1 (see --help)" >&2; exit 2;;
  esac
done
say() { echo "down: $*" >&2; }

# ours PID TEXT: PID runs and its command line contains TEXT (pids are reused).
ours() { kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"; }

# stop NAME PID TEXT SECONDS: SIGTERM, wait up to SECONDS, then SIGKILL.
stop() {
  local name=$1 pid=$2 text=$3 grace=$4 i
  ours "$pid" "$text" || return 0
  say "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 4; i++)); do ours "$pid" "$text" || return 0; sleep 0.25; done
  say "$name (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

if [ -n "$after" ]; then
  [[ "$after" =~ ^[0-9]+$ ]] || { echo "down: --after needs a pid" >&2; exit 2; }
  while kill -0 "$after" 2>/dev/null; do sleep 1; done
  # A stack started since then is not ours to stop.
  [ "$(cut -d' ' -f1 "$dir/dev-stack.pid" 2>/dev/null)" = "$after" ] || exit 0
fi

# The dev stack itself stops its processes in order (satellite first, simulator last) and then NetBox.
if [ -f "$dir/dev-stack.pid" ]; then
  read -r pid text <"$dir/dev-stack.pid" || true
  if [ -n "${pid:-}" ] && ours "$pid" "$text"; then
    say "stopping the dev stack (pid $pid); it stops its processes"
    stop 'the dev stack' "$pid" "$text" 90
  fi
fi

# Whatever it could not stop (it was SIGKILLed, or crashed): the apps, then Temporal.
shopt -s nullglob
for order in satellite agent netbox-agent hub simulator temporal-tls temporal; do
  f="$dir/pids/$order.pid"
  [ -f "$f" ] || continue
  read -r pid text <"$f" || true
  [ -n "${pid:-}" ] && stop "$order" "$pid" "$text" 40
  rm -f "$f"
done

# SLURM: the burn-in cluster in the dev stack's own folder (stop.sh ends only the daemons its pid files name).
if [ -f "$dir/slurm/slurm.conf" ]; then
  bash tools/slurm/stop.sh "$dir/slurm" || true
fi

# NetBox: only the server the dev stack started (its port, its database).
if [ "$(cat ".tools/netbox-state/$netbox_port.db" 2>/dev/null)" = netbox_dev ]; then
  bash tools/netbox/stop.sh --port "$netbox_port"
fi
rm -f "$dir/dev-stack.pid"
say "the dev stack is stopped (start it again with: bash tools/up.sh)"
