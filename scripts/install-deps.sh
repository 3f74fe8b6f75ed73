#!/usr/bin/env bash
# Installs the Debian packages shelfd builds against, and those its tests and benchmarks use.
# Safe to run again: only what is missing is installed.
set -euo pipefail
build=(libcurl4-openssl-dev libssl-dev libturbojpeg0-dev libexif-dev libsqlite3-dev libinotifytools0-dev libsystemd-dev libheif-dev zlib1g-dev libtesseract-dev tesseract-ocr-eng pkg-config)
# Tests of the web pages drive a headless Chromium over WebDriver (chromedriver); the fonts make their
# screenshots readable; wrk loads the web server in its benchmark. Without their recommends: a desktop's
# printing, notification and power daemons are of no use to a headless browser. The PostgreSQL store's tests
# start a server of their own from postgresql's binaries (Tests/ShelfTesting/PostgresServer.swift, as `nobody`
# when run as root); no system service is used. strace shows an upload's fsyncs to the test that a photo
# survives a power cut (UploadTests).
testing=(chromium chromium-driver fonts-dejavu-core wrk postgresql strace)
missing() { for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done; }
mapfile -t missing_build < <(missing "${build[@]}")
mapfile -t missing_testing < <(missing "${testing[@]}")
if [ ${#missing_build[@]} -eq 0 ] && [ ${#missing_testing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing_build[*]} ${missing_testing[*]}"
$sudo apt-get update -q
if [ ${#missing_build[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing_build[@]}"
fi
if [ ${#missing_testing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing_testing[@]}"
fi
