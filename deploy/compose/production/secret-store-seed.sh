#!/bin/sh
# Copies a site's initial secret store (a compose secret) into the site's secret-store volume, once: afterwards the
# volume is the store, which credential rotations rewrite (atomically, mode 0600). Never overwrites it.
set -eu
store=/var/lib/fleet/secrets/store.json
if [ -f "$store" ]; then echo "secret store present; left alone"; exit 0; fi
umask 077
cp /run/secrets/secret-store-seed.json "$store.tmp"
mv "$store.tmp" "$store"
echo "secret store seeded"
