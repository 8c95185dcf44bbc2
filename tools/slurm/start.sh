#!/usr/bin/env bash
# Starts a single-node SLURM cluster for the burn-in tests in FOLDER, using only Debian's packages and files in
# that folder (nothing in /etc): munged with its own key and socket, slurmctld and slurmd for one node
# `localhost` (2 CPUs, partition `burnin`), and slurmrestd (openapi/v0.0.38, JWT over TCP, run as the system
# user `slurmrest`). Ports are picked free on 127.0.0.1. Waits until the node is idle and REST ping answers,
# then writes FOLDER/token (a JWT for user root, one day), FOLDER/cluster.json and FOLDER/cluster.env and
# prints the URL and token file. Jobs and state are kept across stop/start (job ids go on).
# If the cluster in FOLDER is already running it starts nothing, renews the token and prints the same lines.
# Takes about 5 s. Stop it with tools/slurm/stop.sh FOLDER. Needs root and tools/slurm/install.sh first.
#
# Usage: bash tools/slurm/start.sh [FOLDER]    (default: .run/slurm in the repository)
#        then: source FOLDER/cluster.env; sinfo; scontrol show job N; sacct -c
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
t0=$SECONDS
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-$(cd "$here/../.." && pwd)/.run/slurm}
mkdir -p "$B"
B=$(cd "$B" && pwd)
# shellcheck source=tools/slurm/lib.sh
source "$here/lib.sh"
require_slurm
if [ "$(id -u)" != 0 ]; then
  echo "slurm start: needs root (slurmd runs the jobs, slurmrestd drops to the user slurmrest)" >&2
  exit 2
fi
export SLURM_CONF=$B/slurm.conf
say() { echo "slurm start: $*" >&2; }
token_lifespan_s=86400
rest_user=slurmrest

# One start at a time per folder: a second start waits, then finds the cluster running. The daemons must not
# inherit the lock's descriptor (each is started with 9>&-), or they would hold it for their whole life.
exec 9>"$B/.start.lock"
flock -w 120 9 || { say "another start in $B has held $B/.start.lock for 120 s"; exit 1; }

print_cluster() {
  local url
  url=$(sed -n 's/^export SLURMRESTD_URL=//p' "$B/cluster.env")
  echo "slurm: URL $url (openapi v0.0.38; headers X-SLURM-USER-NAME: root, X-SLURM-USER-TOKEN: \$(cat $B/token))"
  echo "slurm: token file $B/token; for the command line: source $B/cluster.env"
}

issue_token() {
  local out
  out=$(scontrol token username=root lifespan=$token_lifespan_s)
  (umask 077 && printf '%s\n' "${out#SLURM_JWT=}" >"$B/token.tmp") && mv "$B/token.tmp" "$B/token"
}

live=$(count_live)
if [ "$live" = "${#daemons[@]}" ] && [ -f "$B/cluster.env" ] && timeout 10 scontrol ping >/dev/null 2>&1; then
  issue_token
  say "already running in $B (token renewed)"
  print_cluster
  exit 0
fi
if [ "$live" != 0 ]; then
  say "$live of ${#daemons[@]} daemons left from an earlier run in $B; stopping them first"
  bash "$here/stop.sh" "$B"
fi

mkdir -p "$B"/{etc,state,spool,log,run,jobs}
chmod 755 "$B" "$B/run" "$B/jobs"   # slurmrestd (not root) reads slurm.conf; munged's socket must be reachable
chmod 700 "$B/etc"
[ -s "$B/etc/munge.key" ] || { head -c 1024 /dev/urandom >"$B/etc/munge.key"; chmod 400 "$B/etc/munge.key"; }
[ -s "$B/etc/jwt.key" ] || { head -c 32 /dev/urandom >"$B/etc/jwt.key"; chmod 600 "$B/etc/jwt.key"; }

# Three distinct free TCP ports on 127.0.0.1: slurmctld, slurmd, slurmrestd.
ports=()
while [ ${#ports[@]} -lt 3 ]; do
  p=$((20000 + RANDOM % 20000))
  [[ " ${ports[*]} " == *" $p "* ]] && continue
  [ -z "$(ss -Htln "sport = :$p")" ] && ports+=("$p")
done
ctld_port=${ports[0]} slurmd_port=${ports[1]} rest_port=${ports[2]}
url="http://127.0.0.1:$rest_port"

cat >"$SLURM_CONF" <<CONF
# Written by tools/slurm/start.sh; rewritten at each start (ports change).
ClusterName=fleettest
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$B/run/munge.socket
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$B/etc/jwt.key
StateSaveLocation=$B/state
SlurmdSpoolDir=$B/spool/slurmd-%n
SlurmctldPidFile=$B/run/slurmctld.pid
SlurmdPidFile=$B/run/slurmd.pid
SlurmctldLogFile=$B/log/slurmctld.log
SlurmdLogFile=$B/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$B/log/jobcomp.txt
# Finished jobs stay in slurmctld (and so in GET /jobs) for a day, not the default 300 s: the burn-in adapter
# looks a job up by name before submitting it again.
MinJobAge=86400
# Schedule a submitted batch job at the next tick (~1 s) instead of batching submissions for 3 s.
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=burnin Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

fail() {
  say "$1"
  local f
  for f in munged slurmctld slurmd slurmrestd; do
    [ -s "$B/log/$f.log" ] && { echo "--- $B/log/$f.log (last lines)" >&2; tail -n 15 "$B/log/$f.log" >&2; }
  done
  bash "$here/stop.sh" "$B" || true
  exit 1
}

wait_for() { # seconds, description, command...
  local limit=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && fail "$what: not within $limit s"
    sleep 0.2
  done
}

say "munged ($B/run/munge.socket)"
munged --key-file="$B/etc/munge.key" --socket="$B/run/munge.socket" --pid-file="$(pid_file munged)" \
  --log-file="$B/log/munged.log" --seed-file="$B/etc/munged.seed" 9>&- || fail "munged did not start"
wait_for 10 "munged socket" test -S "$B/run/munge.socket"

say "slurmctld (port $ctld_port) and slurmd (port $slurmd_port)"
slurmctld -f "$SLURM_CONF" 9>&- || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N localhost 9>&- || fail "slurmd did not start"

id "$rest_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$rest_user"
runuser -u "$rest_user" -- test -r "$SLURM_CONF" ||
  fail "user $rest_user cannot read $SLURM_CONF: every folder above $B must be world-executable"

say "slurmrestd ($url, as $rest_user)"
# slurmrestd stays in the foreground: run it in its own session; it writes its own pid before exec.
SLURM_JWT=daemon setsid bash -c 'echo $$ >"$0"; exec slurmrestd "$@"' "$(pid_file slurmrestd)" \
  -f "$SLURM_CONF" -a rest_auth/jwt -s openapi/v0.0.38 -u "$rest_user" "127.0.0.1:$rest_port" \
  </dev/null >"$B/log/slurmrestd.log" 2>&1 9>&- &

wait_for 30 "slurmctld ping" scontrol ping
wait_for 30 "node localhost idle" bash -c 'sinfo -h -n localhost -o %T | grep -qx idle'
issue_token
rest_ping() {
  curl -sf -o /dev/null -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $(cat "$B/token")" \
    "$url/slurm/v0.0.38/ping"
}
wait_for 30 "slurmrestd ping" rest_ping

cat >"$B/cluster.env" <<ENV
export SLURM_CONF=$SLURM_CONF
export SLURMRESTD_URL=$url
export SLURM_TOKEN_FILE=$B/token
ENV
cat >"$B/cluster.json.tmp" <<JSON
{
  "folder": "$B",
  "url": "$url",
  "user": "root",
  "tokenFile": "$B/token",
  "slurmConf": "$SLURM_CONF",
  "partition": "burnin",
  "jobsDir": "$B/jobs",
  "ports": { "slurmctld": $ctld_port, "slurmd": $slurmd_port, "slurmrestd": $rest_port }
}
JSON
mv "$B/cluster.json.tmp" "$B/cluster.json"
say "up in $((SECONDS - t0)) s"
print_cluster
