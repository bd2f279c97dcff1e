#!/usr/bin/env bash
# Builds the Debian packages of the committed tree (HEAD): an export of it into
# build/deb/xmrgate-VERSION, then dpkg-buildpackage (debhelper, debian/) there; the .debs,
# .buildinfo and .changes land in build/deb/. What is not committed is not packaged. The
# binaries name HEAD's commit (xmrgate_build_info, --version).
#
#   scripts/deb.sh          prints the paths of the three .debs on its last lines
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$REPO/build/deb
die() {
	echo "deb: $*" >&2
	exit 1
}
cd "$REPO"
if ! command -v dpkg-buildpackage >/dev/null || [[ ! -x /usr/bin/dh ]]; then
	die "dpkg-buildpackage and debhelper are missing: run scripts/deps.sh"
fi
version=$(cat VERSION)
changelog=$(dpkg-parsechangelog -S Version)
[[ $version == "$changelog" ]] ||
	die "VERSION says $version, debian/changelog $changelog: add a changelog entry"
commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- . || echo "deb: uncommitted changes are not packaged (building $commit)" >&2

rm -rf "$OUT"
mkdir -p "$OUT"
src=$OUT/xmrgate-$version
git archive --format=tar --prefix="xmrgate-$version/" HEAD | tar -x -C "$OUT"
echo "deb: building xmrgate $version ($commit) in $src" >&2
(cd "$src" && XG_COMMIT=$commit DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b >"$OUT/build.log" 2>&1) ||
	die "dpkg-buildpackage failed: $(tail -n 20 "$OUT/build.log")"
rm -rf "$src"
arch=$(dpkg --print-architecture)
for p in "xmrgate-gateway_${version}_$arch" "xmrgate-billing_${version}_$arch" "xmrgate-admin_${version}_all"; do
	[[ -s $OUT/$p.deb ]] || die "no $p.deb (see $OUT/build.log)"
	echo "$OUT/$p.deb"
done
