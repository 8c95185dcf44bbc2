#!/usr/bin/env bash
# Conformance of the Redfish BMC simulator (packages/simulators), judged by tools we did not write:
#   1. DMTF Redfish-Service-Validator on every profile (schemas from ../shared/peers/redfish-schemas, never downloaded)
#   2. DMTF Redfish-Protocol-Validator on every profile (reported; known gaps in packages/simulators/CONFORMANCE.md)
#   3. OpenStack sushy as an independent client: walk each profile and run a power action
# Exits non-zero on any service-validator failure or sushy failure.
# Usage: tools/redfish-conformance.sh [profile ...]   (default: all profiles)
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0;;
esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(dirname "$repo")/shared/peers"
schemas="$shared/redfish-schemas/csdl"
venv="$repo/.tools/venv-redfish"
out="$repo/.run/redfish-conformance"
port="${RF_CONFORMANCE_PORT:-18443}"
profiles=("$@")
[ ${#profiles[@]} -eq 0 ] && profiles=(gb200-compute gb300-compute powershelf-liteon powershelf-delta nvswitch-tray)

[ -d "$schemas" ] || { echo "missing schema directory $schemas" >&2; exit 2; }
if [ ! -x "$venv/bin/rf_service_validator" ] || ! cmp -s "$repo/tools/requirements-redfish.txt" "$venv/.requirements"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$repo/tools/requirements-redfish.txt"
  cp "$repo/tools/requirements-redfish.txt" "$venv/.requirements"
fi

rm -rf "$out" && mkdir -p "$out"
# One BMC per profile, each on its own loopback address.
{
  echo '{ "log": { "level": "info" }, "timeScale": 0.01, "admin": { "port": 0 }, "bmcs": ['
  i=0
  for p in "${profiles[@]}"; do
    i=$((i + 1))
    [ $i -gt 1 ] && echo ','
    printf '{ "id": "%s", "address": "127.0.77.%d", "port": %d, "username": "admin", "password": "conformance", "profile": "%s", "sessionLimit": 32 }' "$p" "$i" "$port" "$p"
  done
  echo '] }'
} > "$out/simulator.json"

# Each background job in a process group of its own (set -m), so that an exit, Ctrl-C included, stops the simulator
# and any profile's checks with the validators they run.
set -m
trap 'for job in $(jobs -p); do kill -- -"$job" 2>/dev/null || true; done' EXIT
node --import tsx "$repo/packages/simulators/src/main.ts" --config "$out/simulator.json" > "$out/simulator.log" 2>&1 &
sim=$!
for _ in $(seq 100); do
  grep -q 'redfish simulator ready' "$out/simulator.log" && break
  kill -0 "$sim" 2>/dev/null || { cat "$out/simulator.log" >&2; exit 1; }
  sleep 0.2
done
grep -q 'redfish simulator ready' "$out/simulator.log" || { echo 'simulator did not start' >&2; exit 1; }

# Walks a profile with sushy (session auth): collections, firmware inventory, then a power action
# on the profile's power resource (System_0 on trays, the powershelf chassis on shelves).
sushy_walk() {
  "$venv/bin/python" - "$1" admin conformance <<'PY'
import sys, time
import sushy
from sushy import auth

url, user, password = sys.argv[1:4]
root = sushy.Sushy(url, auth=auth.SessionAuth(user, password))
for chassis in root.get_chassis_collection().get_members():
    print('chassis', chassis.identity, chassis.power_state)
for manager in root.get_manager_collection().get_members():
    print('manager', manager.identity, manager.firmware_version)
inventory = root.get_update_service().firmware_inventory.get_members()
assert inventory, 'empty firmware inventory'
for item in inventory:
    assert item.version, f'{item.identity} has no Version'
    print('firmware', item.identity, item.version)

def wait(resource, state):
    for _ in range(100):
        resource.refresh()
        if resource.power_state == state:
            return
        time.sleep(0.1)
    raise AssertionError(f'{resource.path} did not reach {state}, is {resource.power_state}')

if root.json.get('Systems'):
    system = root.get_system('/redfish/v1/Systems/System_0')
    print('system', system.identity, system.power_state, sorted(v.value for v in system.get_allowed_reset_system_values()))
    system.reset_system(sushy.ResetType.ON)
    wait(system, sushy.PowerState.ON)
    system.reset_system(sushy.ResetType.FORCE_OFF)
    wait(system, sushy.PowerState.OFF)
else:
    shelf = root.get_chassis('/redfish/v1/Chassis/powershelf')
    shelf.reset_chassis(sushy.ResetType.FORCE_OFF)
    wait(shelf, sushy.PowerState.OFF)
    shelf.reset_chassis(sushy.ResetType.ON)
    wait(shelf, sushy.PowerState.ON)
print('power action ok')
PY
}

# The three checks of one profile; its summary line goes to $out/summary-<profile>, its verdict to status-<profile>.
check_profile() {  # check_profile PROFILE URL
  local p=$1 url=$2 pass warn fail proto client=ok status=0
  "$venv/bin/rf_service_validator" -u admin -p conformance -r "$url" --authtype Session \
    --schema_directory "$schemas" --skipschema --logdir "$out/service-$p" > "$out/service-$p.txt" 2>&1 || true
  # The summary table's data row: | PASS | WARN | FAIL | NOT TESTED |
  read -r pass warn fail _ < <(grep -A2 'PASS.*WARN.*FAIL' "$out/service-$p.txt" | tail -1 | tr -d '|' ) || true
  if [ -z "${fail:-}" ]; then echo "  service validator produced no summary (see $out/service-$p.txt)"; fail=1; pass=0; warn=0; fi
  [ "$fail" -eq 0 ] || status=1

  "$venv/bin/rf_protocol_validator" -u admin -p conformance -r "$url" --report-dir "$out/protocol-$p" --report-type tsv \
    > "$out/protocol-$p.txt" 2>&1 || true
  proto="$(grep -Eo 'PASS: [0-9]+, WARN: [0-9]+, FAIL: [0-9]+, NOT_TESTED: [0-9]+' "$out/protocol-$p.txt" | tail -1 || true)"
  [ -n "$proto" ] || proto="$(tail -3 "$out/protocol-$p.txt" | tr '\n' ' ')"

  sushy_walk "$url" > "$out/sushy-$p.txt" 2>&1 || { client="FAILED"; status=1; }
  printf '%-18s service: pass %s warn %s fail %s | protocol: %s | sushy: %s\n' "$p" "$pass" "$warn" "$fail" "$proto" \
    "$client" > "$out/summary-$p"
  echo "$status" > "$out/status-$p"
  echo "  $(cat "$out/summary-$p")"
}

# Two profiles at a time: each validator is one busy Python process, and the BMCs are independent.
i=0
for p in "${profiles[@]}"; do
  i=$((i + 1))
  while [ "$(jobs -rp | grep -cvx "$sim")" -ge 2 ]; do wait -n || true; done
  echo "== $p (http://127.0.77.$i:$port)"
  check_profile "$p" "http://127.0.77.$i:$port" &
done
while [ "$(jobs -rp | grep -cvx "$sim")" -gt 0 ]; do wait -n || true; done

status=0
echo
echo "Summary (reports in $out):"
for p in "${profiles[@]}"; do
  printf '  %s\n' "$(cat "$out/summary-$p" 2>/dev/null || echo "$p: no result")"
  [ "$(cat "$out/status-$p" 2>/dev/null)" = 0 ] || status=1
done
exit $status
