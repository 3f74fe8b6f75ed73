#!/bin/sh
# Regenerates docs/shelfd.1, the manual the systemd units name (Documentation=man:shelfd(1)), from the
# commands' own help text with swift-argument-parser's generate-manual plugin. Run it after changing a
# command or its help; SystemdUnitTests fails when a command is missing from the committed manual.
set -eu
cd "$(dirname "$0")/.."
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
swift package --disable-sandbox plugin generate-manual --configuration debug --date "$date"
install -D -m 644 .build/plugins/GenerateManual/outputs/shelfd/shelfd.1 docs/shelfd.1
echo "docs/shelfd.1 written; install it with: install -D -m 644 docs/shelfd.1 ~/.local/share/man/man1/shelfd.1"
