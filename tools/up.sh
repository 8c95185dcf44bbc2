#!/usr/bin/env bash
# Installs everything and starts the whole stack with a simulated site; prints the URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh
export PATH="$PWD/.tools/pnpm/node_modules/.bin:$PATH"
exec pnpm dev "$@"
