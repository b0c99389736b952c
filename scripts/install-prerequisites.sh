#!/usr/bin/env bash
# Installs the Debian packages SnapshotSync builds and tests with (Swift itself must already be on PATH).
set -euo pipefail
# The build and its tests; then `make deb` (dpkg-buildpackage, debhelper) and Tests/PackageTests
# (dpkg-deb, lintian, man from man-db).
packages=(libinotifytools0-dev libsqlite3-dev libssl-dev sqlite3 systemd syncthing python3
    build-essential dpkg-dev debhelper lintian man-db)
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install Swift 6.3 from swift.org first" >&2; exit 1; }
