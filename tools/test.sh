#!/usr/bin/env bash
# Installs everything and builds the production bundles (tools/install.sh runs `pnpm build`), then type-checks,
# lints and runs the whole test suite (unit, Postgres, Temporal dev server and end-to-end across real processes,
# one of them from the build) and the Redfish conformance run against the simulator.
#
# Usage: bash tools/test.sh   (one test file or a few: pnpm test <path-substring> ...)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
bash tools/install.sh
export PATH="$PWD/.tools/pnpm/node_modules/.bin:$PATH"
pnpm typecheck
pnpm lint
pnpm format:check
node tools/check-line-width.mjs
pnpm client:check
# Third-party Redfish tools (DMTF validators, sushy) judge the simulator.
bash tools/redfish-conformance.sh
pnpm test
