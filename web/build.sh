#!/usr/bin/env bash
# Builds the chat page into nara_kg/api/static (git-ignored): the page's own files from web/src
# and its libraries from the npm registry, pinned by package-lock.json. The page loads nothing
# from anywhere else at run time, so it works offline.
#
#   web/build.sh            install (npm ci) when needed, then copy
#   web/build.sh --check    exit 1 when the built page is missing or older than its sources
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/../nara_kg/api/static"
stamp="$out/.built"

sources_newer() {
  [[ ! -f "$stamp" ]] && return 0
  [[ -n "$(find "$here/src" "$here/package.json" "$here/package-lock.json" "$here/build.sh" \
      -newer "$stamp" -print -quit)" ]]
}

if [[ "${1:-}" == "--check" ]]; then
  if sources_newer; then echo "the chat page is not built or out of date: run web/build.sh"; exit 1; fi
  exit 0
fi

command -v npm >/dev/null || { echo "web/build.sh needs npm (Node.js) on PATH" >&2; exit 1; }
cd "$here"
# --ignore-scripts: no package needs an install script here (and swagger-ui-dist's analytics
# dependency would phone home from one).
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  SCARF_ANALYTICS=false npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
fi

mkdir -p "$out/vendor/swagger-ui"
cp src/index.html src/*.css src/*.js src/favicon.svg "$out/"
cp node_modules/cytoscape/dist/cytoscape.min.js "$out/vendor/"
cp node_modules/cytoscape/LICENSE "$out/vendor/cytoscape.LICENSE"
for file in swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE; do
  cp "node_modules/swagger-ui-dist/$file" "$out/vendor/swagger-ui/"
done
touch "$stamp"
echo "built the chat page into ${out#"$here/../"}"
