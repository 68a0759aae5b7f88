#!/usr/bin/env bash
# make smoke: a curl walk through every route of a running `make run`.
#
#   make run                 # terminal 1
#   make smoke               # terminal 2 (SMOKE_URL=http://127.0.0.1:PORT/ if it printed another port)
#
# It signs in as Alice and Bob through make run's local OIDC provider (the
# authorization code flow with PKCE, as the page does: cmd/smoke-token), and
# sends their ID tokens as bearer tokens: no development header, so it needs
# no DEV_AUTH=1. It edits and traces the sample movie fly-courtship as Alice,
# so it fails with 409 lease_held if a browser has that movie open in Analyze.
# Every step prints the method, path, status and what it expected; the first
# unexpected status stops the script with exit code 1.
set -euo pipefail

BASE="${1:-${SMOKE_URL:-http://127.0.0.1:8080/}}"
BASE="${BASE%/}"
MOVIE=fly-courtship
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
token() {
  (cd "$ROOT" && go run ./functions/tools/smoke/cmd/smoke-token -url "$BASE/" -login "$1") || {
    echo "smoke: could not sign in as $1 through the local OIDC provider at $BASE/oidc" >&2
    exit 1
  }
}
ALICE=$(token alice)
BOB=$(token bob)
ID_HEADERS=(-H "Authorization: Bearer $ALICE")
OTHER_HEADERS=(-H "Authorization: Bearer $BOB")
BODY=$(mktemp)
trap 'rm -f "$BODY"' EXIT
steps=0

# call EXPECTED METHOD PATH [curl args...]: the body lands in $BODY.
call() {
  local want=$1 method=$2 path=$3
  shift 3
  local got
  got=$(curl -sS -o "$BODY" -w '%{http_code}' -X "$method" "$@" "$BASE$path") || {
    echo "smoke: $method $path: curl failed: is make run running at $BASE?" >&2
    exit 1
  }
  steps=$((steps + 1))
  if [ "$got" != "$want" ]; then
    echo "FAIL  $method $path -> $got, want $want" >&2
    cat "$BODY" >&2
    echo >&2
    exit 1
  fi
  printf 'ok    %-6s %-55s %s\n' "$method" "$path" "$got"
}
json() { call "$1" "$2" "$3" -H 'Content-Type: application/json' "${@:4}"; }
field() { grep -o "\"$1\":\"[^\"]*\"" "$BODY" | head -n 1 | cut -d'"' -f4; }
has() {
  grep -qF -- "$1" "$BODY" || {
    echo "FAIL  the last body lacks $1:" >&2
    cat "$BODY" >&2
    exit 1
  }
}

echo "smoke: $BASE"
call 200 GET / && has 'src="/app.js"' && has 'src="/auth.js"'
call 200 GET /app.js
call 200 GET /auth.js
call 200 GET /auth-config.json && has '"mode":"oidc"'
call 200 GET /style.css
call 200 GET /openapi.json && has '"/movies/{id}/analysis-lease/release"'

call 401 GET /movies && has '"code":"unauthenticated"'
call 200 GET /movies "${ID_HEADERS[@]}" && has "\"id\":\"$MOVIE\""
call 200 GET "/movies/$MOVIE" "${ID_HEADERS[@]}"
call 404 GET /movies/no-such-movie "${ID_HEADERS[@]}" && has '"code":"not_found"'

call 201 POST "/movies/$MOVIE/analysis-lease" "${ID_HEADERS[@]}"
LEASE=$(field leaseId)
call 409 POST "/movies/$MOVIE/analysis-lease" "${OTHER_HEADERS[@]}" && has '"code":"lease_held"' && has '"userName":"Alice"'
call 200 PUT "/movies/$MOVIE/analysis-lease" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE"

MARKERS='{"markers":[{"id":"m1","label":"Left wing","x":0.45,"y":0.5},{"id":"m2","label":"Right wing","x":0.55,"y":0.5}]}'
json 428 PUT "/movies/$MOVIE/markers" "${OTHER_HEADERS[@]}" -d "$MARKERS" && has '"code":"lease_required"'
json 200 PUT "/movies/$MOVIE/markers" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d "$MARKERS"
json 200 PUT "/movies/$MOVIE/trim" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d '{"start":0,"end":360}'
json 422 PUT "/movies/$MOVIE/trim" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d '{"start":0,"end":99999}' && has '"code":"invalid_input"'
json 200 PUT "/movies/$MOVIE/capture-interval" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d '{"captureInterval":10}'

json 202 POST "/movies/$MOVIE/traces" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d '{"fromFrame":0}'
JOB=$(field jobId)
json 409 PUT "/movies/$MOVIE/markers" "${ID_HEADERS[@]}" -H "Lease-Id: $LEASE" -d "$MARKERS" && has '"code":"tracing_in_progress"'
# The old page's beacon (no identity) cannot remove the tracing lease.
call 204 POST "/movies/$MOVIE/analysis-lease/release" -H 'Content-Type: text/plain' -d "{\"leaseId\":\"$LEASE\"}"

for _ in $(seq 1 120); do
  call 200 GET "/movies/$MOVIE" "${ID_HEADERS[@]}" >/dev/null
  grep -q '"status":"tracing"' "$BODY" || break
  sleep 0.5
done
call 200 GET "/movies/$MOVIE" "${ID_HEADERS[@]}" && has '"status":"traced"' && has "\"jobId\":\"$JOB\""
call 200 GET "/movies/$MOVIE/frames?from=0&limit=10" "${OTHER_HEADERS[@]}" && has '"frames":[{"frame":0'
call 200 GET "/movies/$MOVIE/frames?format=csv" "${OTHER_HEADERS[@]}" && has 'frame,time,markerId,label,x,y'
call 200 GET "/movies/$MOVIE/frames" "${OTHER_HEADERS[@]}" -H 'Accept: text/csv' && has 'frame,time,markerId,label,x,y'
call 422 GET "/movies/$MOVIE/frames?limit=0" "${OTHER_HEADERS[@]}"

call 201 POST "/movies/$MOVIE/analysis-lease" "${ID_HEADERS[@]}"
call 204 DELETE "/movies/$MOVIE/analysis-lease" "${ID_HEADERS[@]}" -H "Lease-Id: $(field leaseId)"
call 201 POST "/movies/$MOVIE/analysis-lease" "${OTHER_HEADERS[@]}"
call 204 POST "/movies/$MOVIE/analysis-lease/release" -d "{\"leaseId\":\"$(field leaseId)\"}"
call 200 GET "/movies/$MOVIE" "${ID_HEADERS[@]}" && has '"lock":null'

echo "smoke: all $steps requests answered as expected"
