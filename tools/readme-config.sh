#!/usr/bin/env bash
# Prints README.md with the configuration reference (from each daemon's
# --config-reference) placed between the config-reference markers.
set -euo pipefail
bin=${1:-bin}
ref=$(mktemp)
trap 'rm -f "$ref"' EXIT
{
	"$bin/xmrgate-gateway" --config-reference
	echo
	"$bin/xmrgate-billing" --config-reference
} >"$ref"
awk -v ref="$ref" '
	/<!-- config-reference:begin -->/ { print; while ((getline line < ref) > 0) print line; skip = 1; next }
	/<!-- config-reference:end -->/ { skip = 0 }
	!skip { print }' README.md
