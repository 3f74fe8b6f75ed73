#!/usr/bin/env bash
# Builds shelfd_<version>_amd64.deb in the current folder from the release build, with Debian's own tools
# (dpkg-shlibdeps, dpkg-deb): the stripped binary in /usr/bin, ONNX Runtime's library and the PP-OCR models as
# scripts/install-deps.sh installed them (so the package reads photos offline with nothing else fetched), the system
# and user units, /etc/shelfd/shelfd.toml as a conffile, the manual, and the copyright of each part. The maintainer
# scripts make the `shelfd` system user, enable and start the service (restart it on upgrade), stop it on remove, and
# on purge remove the configuration and the user but never /var/lib/shelfd (docs/running.md, "The Debian package").
#
#   scripts/make-deb.sh            # after the README's set-up; then: sudo apt install ./shelfd_*.deb
#
# The version is 0.1.<commits on this branch>, so a package built later upgrades one built before; SHELFD_DEB_VERSION
# sets another.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD

version=${SHELFD_DEB_VERSION:-0.1.$(git rev-list --count HEAD 2>/dev/null || echo 0)}
architecture=$(dpkg --print-architecture)
binary=.build/release/shelfd
if [ ! -x "$binary" ]; then
    echo "make-deb: no $binary: run the README's set-up first (scripts/install-deps.sh, then the release build)" >&2
    exit 1
fi
# The offline reader's files, where scripts/install-deps.sh put them (as root /usr/local, else ~/.local).
ort_library=libonnxruntime.so.1.32.0
models=(PP-OCRv6_det_small.onnx PP-OCRv6_rec_small.onnx ch_ppocr_mobile_v2.0_cls_mobile.onnx)
prefix=""
for candidate in /usr/local "$HOME/.local"; do
    if [ -f "$candidate/lib/shelfd/$ort_library" ] && [ -f "$candidate/share/shelfd/ocr/${models[0]}" ]; then
        prefix=$candidate
        break
    fi
done
if [ -z "$prefix" ]; then
    echo "make-deb: ONNX Runtime and the PP-OCR models are not installed: run scripts/install-deps.sh" >&2
    exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/shelfd_${version}_${architecture}"
doc="$root/usr/share/doc/shelfd"
install -d "$root/DEBIAN" "$doc"

install -D -m 755 -s "$binary" "$root/usr/bin/shelfd"
install -D -m 644 "$prefix/lib/shelfd/$ort_library" "$root/usr/lib/shelfd/$ort_library"
strip --strip-unneeded "$root/usr/lib/shelfd/$ort_library"
for model in "${models[@]}"; do
    install -D -m 644 "$prefix/share/shelfd/ocr/$model" "$root/usr/share/shelfd/ocr/$model"
done

# The units as the repository keeps them, for the binary in /usr/bin; the system service keeps its files under
# /var/lib/shelfd (StateDirectory=), so it needs no other writable path. Their comments say how to install them by
# hand, which the package does.
unit() { # SOURCE DESTINATION
    sed -e '1,/^\[Unit\]/{/^#/d}' -e 's|/usr/local/bin/shelfd|/usr/bin/shelfd|; s|%h/.local/bin/shelfd|/usr/bin/shelfd|' \
        -e '/^ReadWritePaths=\/srv\/shelves$/d' "$1" >"$2"
    chmod 644 "$2"
}
install -d "$root/lib/systemd/system" "$root/usr/lib/systemd/user"
for name in shelfd.service shelfd-rescan.service shelfd-rescan.timer; do
    unit "systemd/system/$name" "$root/lib/systemd/system/$name"
    unit "systemd/user/$name" "$root/usr/lib/systemd/user/$name"
done

# The configuration with every key at its default, but the service's folders: photos and results under
# /var/lib/shelfd/shelves, the database under /var/lib/shelfd/state.
install -d "$root/etc/shelfd"
sed -e 's|^root = "~/Shelves"  |root = "/var/lib/shelfd/shelves"|' \
    -e 's|^state = "~/.local/state/shelfd"|state = "/var/lib/shelfd/state"|' etc/shelfd.toml >"$root/etc/shelfd/shelfd.toml"
grep -q '^root = "/var/lib/shelfd/shelves"' "$root/etc/shelfd/shelfd.toml"
grep -q '^state = "/var/lib/shelfd/state"' "$root/etc/shelfd/shelfd.toml"
chmod 644 "$root/etc/shelfd/shelfd.toml"
echo /etc/shelfd/shelfd.toml >"$root/DEBIAN/conffiles"

install -d "$root/usr/share/man/man1"
gzip -9n <docs/shelfd.1 >"$root/usr/share/man/man1/shelfd.1.gz"
chmod 644 "$root/usr/share/man/man1/shelfd.1.gz"
install -m 644 scripts/debian/copyright "$doc/copyright"
install -D -m 644 scripts/debian/lintian-overrides "$root/usr/share/lintian/overrides/shelfd"
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
printf 'shelfd (%s) unstable; urgency=medium\n\n  * Built from commit %s.\n\n -- shelfd developers <shelfd@shelfd.invalid>  %s\n' \
    "$version" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$date" | gzip -9n >"$doc/changelog.gz"
chmod 644 "$doc/changelog.gz"

# What the binary and ONNX Runtime link against, as Debian's packages (dpkg-shlibdeps reads debian/control for the
# package's name). libheif and Tesseract are opened only when needed (a HEIC photo; [ocr] engine = "tesseract"), so
# dpkg-shlibdeps cannot see them: they are named here.
mkdir -p "$work/shlibs/debian"
printf 'Source: shelfd\n\nPackage: shelfd\nArchitecture: any\n' >"$work/shlibs/debian/control"
linked=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/shelfd" "$root/usr/lib/shelfd/$ort_library" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: shelfd
Version: $version
Architecture: $architecture
Maintainer: shelfd developers <shelfd@shelfd.invalid>
Installed-Size: $size
Depends: $linked, libheif1, adduser, init-system-helpers (>= 1.54~)
Recommends: libtesseract5, tesseract-ocr-eng
Section: graphics
Priority: optional
Description: catalogue bookshelf photos into a library of books
 A daemon that watches a folder for photos of bookshelves, reads the books on
 them with a vision model (Google Gemini, Cloudflare Workers AI, a local
 OpenAI-compatible model) or offline with PaddleOCR's models, checks and
 deduplicates them, and writes a result per photo, a review queue and a
 library other applications can import. Photos dropped into
 /var/lib/shelfd/shelves/incoming are read by the shelfd service.
EOF
for script in postinst prerm postrm; do install -m 755 "scripts/debian/$script" "$root/DEBIAN/$script"; done

package="shelfd_${version}_${architecture}.deb"
dpkg-deb --root-owner-group -Zxz -z6 --build "$root" "$here/$package" >/dev/null
echo "make-deb: $package ($(du -m "$here/$package" | cut -f1) MB); install it with: sudo apt install ./$package"
