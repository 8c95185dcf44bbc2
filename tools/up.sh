#!/usr/bin/env bash
# Installs everything (tools/install.sh) and starts the whole stack with a simulated site (tools/dev-stack.ts):
# Temporal, NetBox, the simulator, hub, NetBox agent, workflow agent and one satellite. Prints progress while it
# starts, then the URLs and API tokens.
#
# Usage: bash tools/up.sh
# Stop:  Ctrl-C, or `bash tools/down.sh` from another shell (also stops what a killed stack left running).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac
echo "up: installing (the first time takes about 10 minutes, mostly NetBox's database migrations; then seconds)"
bash tools/install.sh
echo "up: starting the dev stack"
# node itself, not a pnpm or tsx wrapper: a signal reaches the stack, which stops its processes in order.
exec node --import tsx tools/dev-stack.ts "$@"
