#!/usr/bin/env bash
# Stops the single-node SLURM cluster that tools/slurm/start.sh started in FOLDER: cancels its jobs so no job
# process outlives it, then ends slurmrestd and slurmd, then slurmctld and munged, by their pid files (TERM,
# KILL after 10 s). Kills nothing else. About 4 s. The folder (config, keys, state, logs, job output) is kept.
#
# Usage: bash tools/slurm/stop.sh [FOLDER]     (default: .run/slurm in the repository)
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$(cd "$here/../.." && pwd)/.run/slurm}
if [ ! -d "$B" ]; then
  echo "slurm stop: no cluster folder $B" >&2
  exit 0
fi
B=$(cd "$B" && pwd)
# shellcheck source=tools/slurm/lib.sh
source "$here/lib.sh"
export SLURM_CONF=$B/slurm.conf

# Cancel every job first: once slurmd is gone nothing would end their job steps.
if live_pid slurmctld >/dev/null && [ -f "$SLURM_CONF" ]; then
  jobs=$(timeout 10 squeue -h -o %A 2>/dev/null || true)
  if [ -n "$jobs" ]; then
    # shellcheck disable=SC2086
    timeout 10 scancel $jobs 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(timeout 5 squeue -h -t RUNNING,COMPLETING -o %A 2>/dev/null || true)" ] && break
      sleep 0.2
    done
  fi
fi

# TERM the daemons of a group together and wait for them (each takes about 2 s to exit); KILL after 10 s.
stop_group() {
  local d pid pids=() names=()
  for d in "$@"; do
    if pid=$(live_pid "$d"); then
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid") names+=("$d")
    fi
  done
  # Wait on the processes themselves: slurmctld removes its pid file before it has finished saving state.
  local i left
  for _ in $(seq 100); do
    left=0
    for i in "${!pids[@]}"; do is_daemon "${pids[$i]}" "${names[$i]}" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if is_daemon "${pids[$i]}" "${names[$i]}"; then
      echo "slurm stop: ${names[$i]} (pid ${pids[$i]}) ignored TERM for 10 s; KILL" >&2
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
  done
  for d in "$@"; do rm -f "$(pid_file "$d")"; done
}

# The REST front and the node first, then the controller (saving its state) with munged.
stop_group slurmrestd slurmd
stop_group slurmctld munged
echo "slurm stop: stopped the cluster in $B" >&2
