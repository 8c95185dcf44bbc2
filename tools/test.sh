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
# The static checks are single-threaded: they run side by side, each one's output printed whole when all end.
mkdir -p .run
checks=(typecheck lint format:check)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for c in "${checks[@]}"; do pnpm "$c" >".run/check-${c%%:*}.log" 2>&1 & pids+=($!); done
failed=()
for i in "${!checks[@]}"; do
  rc=0; wait "${pids[$i]}" || rc=$?
  echo "--- pnpm ${checks[$i]} (exit $rc)"; cat ".run/check-${checks[$i]%%:*}.log"
  [ "$rc" = 0 ] || failed+=("pnpm ${checks[$i]}")
done
trap - EXIT
[ ${#failed[@]} = 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
node tools/check-line-width.mjs
pnpm client:check
# Third-party Redfish tools (DMTF validators, sushy) judge the simulator.
bash tools/redfish-conformance.sh
pnpm test
