#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# .ci/conformance/package.json; it needs Node 22, installed by .ci/node.sh for this step only) against
# the started service (docs/assistant.md, "Conformance"):
#   1. the server scenarios, revision 2025-11-25 (active suite) and 2026-07-28 (draft suite), through a
#      loopback proxy that adds a bearer token from a real OAuth flow (.ci/conformance/proxy.ts);
#   2. the authorization-server scenarios (metadata, authorization code grant), the sign-in and
#      consent pages driven in chromium (.ci/conformance/authorization.ts);
# both compared with .ci/conformance/baseline.yml: an unexpected failure or a baselined entry that
# passes fails the run. The service runs with `npm start` on its own ports and a temporary DATA_DIR
# (embedded PostgreSQL, demo data), and is stopped at the end.
# Use: bash .ci/conformance.sh   (or npm run conformance). Ports: CONFORMANCE_PORT (48590) and the
# four above it (sandbox, embedded PostgreSQL, proxy, the suite's OAuth callback).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
port="${CONFORMANCE_PORT:-48590}"
base="http://127.0.0.1:$port"
work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX")"
node22="$(bash .ci/node.sh 22)/node"
cli="$root/.ci/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$cli" ]; then
  (cd .ci/conformance && PATH="$(dirname "$node22"):$PATH" npm ci --no-audit --no-fund --loglevel=error)
fi
echo "MCP conformance suite $("$node22" "$cli" --version) on Node $("$node22" --version); results in $work"

service_pid=""
proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true
  if [ -n "$service_pid" ]; then
    # npm does not pass SIGTERM on to the service: signal its whole process group (npm, the service,
    # which drains and stops its embedded PostgreSQL), wait until it is gone, then force it.
    kill -TERM -- "-$service_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 -- "-$service_pid" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$service_pid" 2>/dev/null || true
  fi
  rm -rf "$work/data"
}
trap cleanup EXIT

# In a process group of its own (setsid), so that stopping it reaches the service behind npm.
PORT="$port" SANDBOX_PORT="$((port + 1))" EMBEDDED_PG_PORT="$((port + 2))" DATA_DIR="$work/data" \
  setsid npm start >"$work/service.log" 2>&1 &
service_pid=$!
for _ in $(seq 1 240); do
  if curl -sf -m 5 "$base/readyz" >/dev/null; then break; fi
  if ! kill -0 "$service_pid" 2>/dev/null; then
    tail -40 "$work/service.log"
    echo "the service stopped before it was ready" >&2
    exit 1
  fi
  sleep 1
done
curl -sf -m 5 "$base/readyz" >/dev/null || { tail -40 "$work/service.log"; echo "the service was not ready in 240 s" >&2; exit 1; }

node --import tsx .ci/conformance/proxy.ts "$base" "$((port + 3))" "$work/data/demo.json" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 60); do
  if grep -q "proxy ready" "$work/proxy.log"; then break; fi
  if ! kill -0 "$proxy_pid" 2>/dev/null; then cat "$work/proxy.log"; exit 1; fi
  sleep 1
done
cat "$work/proxy.log"
mcp="http://127.0.0.1:$((port + 3))/mcp"

status=0
for suite in active draft; do
  echo "=== server scenarios, $suite suite ==="
  "$node22" "$cli" server --url "$mcp" --suite "$suite" --expected-failures .ci/conformance/baseline.yml \
    -o "$work/server-$suite" >"$work/server-$suite.log" 2>&1 || status=1
  sed -n '/=== SUMMARY ===/,$p' "$work/server-$suite.log"
done

echo "=== authorization server scenarios ==="
node --import tsx .ci/conformance/authorization.ts "$base" "$((port + 4))" "$work/data/demo.json" "$work/authorization" \
  -- "$node22" "$cli" >"$work/authorization.log" 2>&1 || status=1
grep -E "^browser:|✓|✗|^Total" "$work/authorization.log" || cat "$work/authorization.log"

if [ "$status" -ne 0 ]; then
  echo "MCP conformance: FAILED (logs and checks.json files in $work)" >&2
else
  echo "MCP conformance: passed (every failure is in .ci/conformance/baseline.yml, none of it passes)"
fi
exit "$status"
