# Shared by start.sh and stop.sh: the cluster folder's layout and the pid-file checks.
# Expects $B (the cluster folder, absolute) to be set by the caller.

daemons=(munged slurmctld slurmd slurmrestd)

pid_file() { echo "$B/run/$1.pid"; }

# Whether process PID is alive and is daemon NAME (pids get reused).
is_daemon() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }

# The pid in the daemon's pid file, if that process is alive and is that daemon (pids get reused).
live_pid() {
  local file pid
  file=$(pid_file "$1")
  [ -s "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] && is_daemon "$pid" "$1" || return 1
  echo "$pid"
}

count_live() {
  local n=0 d
  for d in "${daemons[@]}"; do live_pid "$d" >/dev/null && n=$((n + 1)); done
  echo "$n"
}

require_slurm() {
  local cmd
  for cmd in munged slurmctld slurmd slurmrestd scontrol sinfo squeue scancel; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
      echo "slurm: '$cmd' is not installed: run bash tools/slurm/install.sh (or bash tools/install.sh)" >&2
      exit 2
    fi
  done
}
