#!/usr/bin/env bash
# Installs Debian's SLURM for the burn-in tests when it is missing: slurm-wlm (slurmctld, slurmd and the client
# commands), slurmrestd and munge. Nothing is configured or started here: tools/slurm/start.sh does that in a
# project folder. A second run checks the three daemons and returns at once. About 20 s the first time.
#
# Usage: bash tools/slurm/install.sh
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac

missing=()
for cmd in slurmctld slurmd slurmrestd munged scontrol; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing+=("$cmd")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "slurm install: slurmctld, slurmd, slurmrestd and munged are installed" >&2
  exit 0
fi

echo "slurm install: missing ${missing[*]}; apt-get install slurm-wlm slurmrestd munge" >&2
sudo_cmd=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
$sudo_cmd apt-get update -qq
# Debian's packages do not start their services here (no systemd; the start script runs the daemons itself).
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq slurm-wlm slurmrestd munge >/dev/null
echo "slurm install: done ($(slurmctld -V 2>/dev/null || /usr/sbin/slurmctld -V))" >&2
