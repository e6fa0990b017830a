#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tests the course site as a reader's browser sees it: builds it (mkdocs build --strict, figures
# and lab sheets included), serves it on 127.0.0.1 and opens every page in headless Chromium at
# 1280 px (tools/docs/browser-check/check.mjs): no console errors, every image and SVG loads with a
# size, every link and anchor inside the site resolves, no Markdown left unrendered (backticks,
# **, a "Questions" line without its list), no formula left raw, nothing wider than the window
# outside a scrolling container, no table wider than the text column, no code comment broken onto
# a second line, in every plot and diagram no label cut short, on another label, on a line or on a
# marker and no point hidden under another, and the site search finds "coalescing" and "marching
# planes". The check first runs on its fixtures (browser-check/fixtures/) and fails if it misses one.
# The sheets' hints: where the tree's sheets (labs/*/README.md) have <details> hints (the course, the
# guided edition), the site must show them; where they have none (the standard edition), it must
# show none (check.mjs, SHEET_HINTS). Run it inside an unpacked edition to check that edition's site.
# Usage: tools/docs/docs-check.sh [LOG_DIR]   (default build-docs-check/, git-ignored): the log folder
# keeps mkdocs.log, check.log and screenshots of five pages (screenshots/*.png: a sheet's hint and
# questions, or its questions alone where the sheets have no hints, a chapter's table, a steps plot,
# the roofline, a formula) for a person to look at.
# Needs mkdocs with mkdocs-material, python3-matplotlib and libjs-katex (Debian's packages), Node.js
# 18+ with npm, and Chromium (Debian's `chromium`, or CHROMIUM=/path/to/chrome). Installs
# playwright-core from the lock file if missing.
# DOCS_SITE_DIR=DIR builds the site there and keeps it (for grading/leak_check.py), instead of a
# temporary folder.
# Prints the problems found and one verdict line, "docs check: PASS (...)" or "docs check: FAIL
# (...)"; exits 0 only on PASS.
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=${1:-build-docs-check}
mkdir -p "$logs" && logs=$(cd "$logs" && pwd) || { echo "docs check: FAIL (cannot make the log folder $logs)"; exit 1; }
rm -rf "$logs/screenshots"
work=$(mktemp -d /tmp/docs-check.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "docs check: FAIL ($*)"
  exit 1
}

command -v mkdocs >/dev/null || fail "mkdocs is missing: apt-get install mkdocs mkdocs-material"
command -v node >/dev/null || fail "node is missing: apt-get install nodejs npm"
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || fail "no Chromium at $chromium: apt-get install chromium, or set CHROMIUM"
if [ ! -f tools/docs/browser-check/node_modules/playwright-core/package.json ]; then
  command -v npm >/dev/null || fail "npm is missing: apt-get install npm"
  (cd tools/docs/browser-check && npm ci --no-audit --no-fund --loglevel=error) >"$work/npm.log" 2>&1 \
    || { tail -5 "$work/npm.log"; fail "npm ci in tools/docs/browser-check failed"; }
fi

site=${DOCS_SITE_DIR:-$work/site}
if ! mkdocs build --strict --site-dir "$site" >"$logs/mkdocs.log" 2>&1; then
  grep -E "WARNING|ERROR|Error|Aborted" "$logs/mkdocs.log" | head -20
  fail "mkdocs build --strict failed (log: $logs/mkdocs.log)"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
  sleep 0.1
done

# The sheets' hints, as the tree has them (coursemodel/audience.py's pattern, HINT_OPEN).
if grep -qsE '^[[:space:]]*<details>[[:space:]]*<summary>[[:space:]]*Hint' labs/*/README.md; then sheet_hints=yes; else sheet_hints=no; fi
SHEET_HINTS=$sheet_hints CHROMIUM="$chromium" node tools/docs/browser-check/check.mjs "http://127.0.0.1:$port/" "$site" "$logs/screenshots" \
  2>&1 | tee "$logs/check.log"
