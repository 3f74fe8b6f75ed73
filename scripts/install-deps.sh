#!/usr/bin/env bash
# Installs the Debian packages shelfd builds against. Safe to run again: only what is missing is installed.
set -euo pipefail
packages=(libcurl4-openssl-dev libssl-dev libturbojpeg0-dev libexif-dev libsqlite3-dev libinotifytools0-dev libsystemd-dev libheif-dev zlib1g-dev libtesseract-dev tesseract-ocr-eng pkg-config)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
