#!/bin/sh
# Makes namespace `fleet` (the configs' temporal.namespace) and registers the search attributes Fleet's workflows
# set, passed as arguments: NAME=Type ... (production.yml lists them; test/compose-production.test.ts checks them
# against @fleet/domain). Attributes already registered are left alone, so the service can run on every start.
set -eu
ns=fleet
until temporal operator cluster health | grep -q SERVING; do sleep 2; done
temporal operator namespace describe --namespace "$ns" >/dev/null 2>&1 ||
  temporal operator namespace create --namespace "$ns" --retention 30d
existing=$(temporal operator search-attribute list --namespace "$ns")
for attr in "$@"; do
  name=${attr%%=*}
  echo "$existing" | grep -qw "$name" ||
    temporal operator search-attribute create --namespace "$ns" --name "$name" --type "${attr#*=}"
done
