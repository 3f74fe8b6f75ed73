#!/usr/bin/env bash
# Checks a package scripts/make-deb.sh built the way a person installs, upgrades and removes it, on this machine (as
# root; CI runs it): lintian reports no error; `apt-get install` pulls its dependencies; the installed units pass
# `systemd-analyze verify`; the installed binary, as the service's user, passes `shelfd doctor` and reads samples/
# offline, and its service's command reads a photo dropped into incoming/; installing the same package again, then a newer build, keeps a changed /etc/shelfd/shelfd.toml and the
# database; `apt-get purge` leaves the data under /var/lib/shelfd and no unit, user or configuration behind.
#
#   scripts/check-deb.sh shelfd_<version>_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/.."
package=$(realpath "$1")
fail() { echo "check-deb: $*" >&2; exit 1; }
say() { echo "check-deb: $*"; }
[ "$(id -u)" -eq 0 ] || fail "run it as root: it installs and purges the package"
dpkg -s shelfd >/dev/null 2>&1 && fail "shelfd is installed already; the check installs and purges it itself"
export DEBIAN_FRONTEND=noninteractive
units=(/lib/systemd/system/shelfd.service /lib/systemd/system/shelfd-rescan.service /lib/systemd/system/shelfd-rescan.timer)
config=/etc/shelfd/shelfd.toml database=/var/lib/shelfd/state/shelfd.db
as_shelfd() { runuser -u shelfd -- env HOME=/var/lib/shelfd "$@"; }
done_photos() { as_shelfd /usr/bin/shelfd status --json | jq '.queue.done + .queue.review'; }

say "lintian"
lintian --fail-on error --tag-display-limit 0 "$package"

say "apt-get install $(basename "$package")"
started=$SECONDS
apt-get install -y -q "$package" >/dev/null
say "installed in $((SECONDS - started)) s ($(du -m "$package" | cut -f1) MB)"
systemd-analyze verify "${units[@]}"
getent passwd shelfd >/dev/null || fail "no shelfd user"

say "shelfd doctor, as the service's user"
as_shelfd /usr/bin/shelfd doctor >/dev/null || as_shelfd /usr/bin/shelfd doctor

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp -r samples "$work/samples"
chmod -R a+rX "$work"
# The installed folders; the sample catalogue as the only source, so nothing is asked of the network.
printf '[paths]\nroot = "/var/lib/shelfd/shelves"\nstate = "/var/lib/shelfd/state"\n\n[enrich]\nsources = ["catalogue"]\n' \
    >"$work/offline.toml"
as_shelfd /usr/bin/shelfd catalogue import --config "$work/offline.toml" "$work/samples/catalogue.csv" >/dev/null
say "the service's command, as its user: a photo dropped into incoming/ is read"
# Without systemd here (a container), the unit's ExecStart= is run as the unit runs it, with the folders of the
# installed configuration and no source on the network.
setpriv --reuid=shelfd --regid=shelfd --init-groups env HOME=/var/lib/shelfd /usr/bin/shelfd watch --config "$work/offline.toml" \
    >"$work/watch.log" 2>&1 &
watcher=$!
cp samples/classics.jpg "$work/dropped.jpg" && chown shelfd:shelfd "$work/dropped.jpg"
for _ in $(seq 1 600); do
    [ "$(as_shelfd /usr/bin/shelfd status --json | jq .daemon.running)" = true ] && break
    sleep 0.1
done
mv "$work/dropped.jpg" /var/lib/shelfd/shelves/incoming/dropped.jpg
for _ in $(seq 1 600); do [ -f /var/lib/shelfd/shelves/results/dropped.json ] && break; sleep 0.1; done
kill -TERM "$watcher" && wait "$watcher" || fail "shelfd watch did not stop cleanly on SIGTERM: $(tail -5 "$work/watch.log")"
[ -f /var/lib/shelfd/shelves/results/dropped.json ] || fail "the service did not read a dropped photo: $(tail -5 "$work/watch.log")"
say "installed to a dropped photo read in $((SECONDS - started)) s"

say "shelfd scan samples/ offline, as the service's user"
as_shelfd /usr/bin/shelfd scan --config "$work/offline.toml" --json "$work/samples" >"$work/scan.json"
photos=$(jq length "$work/scan.json")
fewest=$(jq '[.[] | [.books[] | select(.status == "verified")] | length] | min' "$work/scan.json")
verified=$(jq '[.[].books[] | select(.status == "verified")] | length' "$work/scan.json")
say "$photos photos read, $verified books verified, at least $fewest on each"
[ "$photos" -eq 6 ] && [ "$fewest" -ge 5 ] || fail "the installed binary did not read samples/"
[ ! -e /var/lib/shelfd/.cache/Microsoft ] || fail "ONNX Runtime kept telemetry in the service's home: it would send it"

say "installing again and upgrading keep a changed configuration and the database"
sed -i 's/^review_threshold = 0.6 /review_threshold = 0.65/' "$config"
grep -q '^review_threshold = 0.65' "$config" || fail "could not change $config"
apt-get install -y -q --reinstall "$package" >/dev/null
grep -q '^review_threshold = 0.65' "$config" || fail "installing again replaced the changed $config"
[ "$(done_photos)" -eq 6 ] || fail "installing again lost the database"
version=$(dpkg-deb -f "$package" Version)
SHELFD_DEB_VERSION="$version.1" scripts/make-deb.sh >/dev/null
newer="$PWD/shelfd_${version}.1_$(dpkg --print-architecture).deb"
apt-get install -y -q "$newer" >/dev/null
rm -f "$newer"
[ "$(dpkg-query -W -f '${Version}' shelfd)" = "$version.1" ] || fail "the newer build was not installed"
grep -q '^review_threshold = 0.65' "$config" || fail "the upgrade replaced the changed $config"
[ "$(done_photos)" -eq 6 ] || fail "the upgrade lost the database"

say "apt-get purge shelfd"
apt-get purge -y -q shelfd >/dev/null
[ -f "$database" ] || fail "purge removed the database"
[ -d /var/lib/shelfd/shelves/incoming ] || fail "purge removed the shelves"
[ ! -e /etc/shelfd ] || fail "purge left /etc/shelfd"
! getent passwd shelfd >/dev/null || fail "purge left the shelfd user"
for unit in "${units[@]}"; do [ ! -e "$unit" ] || fail "purge left $unit"; done
[ -z "$(find /etc/systemd -name 'shelfd*' 2>/dev/null)" ] || fail "purge left links to the units in /etc/systemd"
rm -rf /var/lib/shelfd
say "all good"
