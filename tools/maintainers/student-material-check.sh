#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What students get, checked as they get it: both student editions exported (standard as .zip, guided
# as .tar.gz), then grading/leak_check.py on both (no open step's reference design words, no grader,
# no instructors' page); then, in each unpacked edition, its own students' site built and checked in
# headless Chromium (tools/docs/docs-check.sh: the standard edition's sheets without hints, the
# guided edition's with them) and the leak check on that site (no design words, no instructors'
# page or figure, no figures' manifest). SITE=DIR adds a students' site built elsewhere (CI's own
# build of the course's site) to the leak check.
# Usage: [SITE=DIR] [BROWSER=no] tools/maintainers/student-material-check.sh [OUT_DIR]
# (default build-student-material/, git-ignored: the editions, their sites, the docs checks' logs and
# screenshots). BROWSER=no builds the editions' sites with mkdocs --strict and leak-checks them
# without opening them in Chromium. Needs what docs-check.sh needs; reuses the course's
# tools/docs/browser-check/node_modules where there is one.
# Prints one line per check and a last line "student material: PASS" or "student material: FAIL
# (...)"; exits 0 only on PASS.
set -uo pipefail
cd "$(dirname "$0")/../.."
course=$(pwd)
out=${1:-build-student-material}
mkdir -p "$out" && out=$(cd "$out" && pwd) || { echo "student material: FAIL (cannot make $out)"; exit 1; }
rm -rf "$out/standard" "$out/guided" "$out/standard.zip" "$out/guided.tar.gz" "$out"/*-site "$out"/*-docs-check
failed=()
check() {  # check NAME COMMAND...: runs it, its output to OUT/NAME.log, and says how it went
  local name=$1; shift
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then
    echo "PASS: $name ($((SECONDS - start)) s; $(tail -n 1 "$out/$name.log"))"
  else
    echo "FAIL: $name ($((SECONDS - start)) s; $out/$name.log):"
    tail -n 25 "$out/$name.log" | sed 's/^/    /'
    failed+=("$name")
  fi
}

check export-standard python3 -m grading export-student --out "$out/standard.zip"
check export-guided python3 -m grading export-student --edition guided --out "$out/guided.tar.gz"
mkdir -p "$out/standard" "$out/guided"
(cd "$out/standard" && unzip -q ../standard.zip) && (cd "$out/guided" && tar -xzf ../guided.tar.gz) \
  || { echo "student material: FAIL (the editions could not be unpacked)"; exit 1; }
check leak-check-editions python3 -m grading.leak_check --edition "$out/standard.zip" --edition "$out/guided.tar.gz"

# playwright-core for the browser check, once, in the course (each edition's check links it)
modules="$course/tools/docs/browser-check/node_modules"
if [ "${BROWSER:-yes}" != no ] && [ ! -f "$modules/playwright-core/package.json" ] && command -v npm >/dev/null; then
  (cd tools/docs/browser-check && npm ci --no-audit --no-fund --loglevel=error) >"$out/npm.log" 2>&1 \
    || echo "note: npm ci in tools/docs/browser-check failed ($out/npm.log): each edition's check tries its own"
fi
for edition in standard guided; do
  root="$out/$edition/cuda-labs"
  site="$out/$edition-site"
  if [ "${BROWSER:-yes}" = no ]; then
    check "site-$edition" bash -c 'cd "$1" && mkdocs build --strict --site-dir "$2"' _ "$root" "$site"
  else
    [ -d "$modules" ] && [ ! -e "$root/tools/docs/browser-check/node_modules" ] \
      && ln -s "$modules" "$root/tools/docs/browser-check/node_modules"
    check "docs-check-$edition" env DOCS_SITE_DIR="$site" "$root/tools/docs/docs-check.sh" "$out/$edition-docs-check"
  fi
  if [ -d "$site" ]; then check "leak-check-$edition-site" python3 -m grading.leak_check --site "$site"
  else echo "FAIL: leak-check-$edition-site (no site was built)"; failed+=("leak-check-$edition-site"); fi
done
if [ -n "${SITE:-}" ]; then check leak-check-site python3 -m grading.leak_check --site "$SITE"; fi

if [ ${#failed[@]} -eq 0 ]; then echo "student material: PASS"; exit 0; fi
echo "student material: FAIL (${failed[*]})"
exit 1
