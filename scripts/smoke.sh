#!/usr/bin/env bash
# Smoke test: start the real hashlined on a temp workspace and drive it with
# the pinned grpcurl through reflection: list, describe, Read, Edit, stale Edit.
set -euo pipefail
cd "$(dirname "$0")/.."
GRPCURL=(go tool -modfile=tools/grpcurl/go.mod grpcurl)
tmp=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

# go run keeps the executable it links in the build cache (go build relinks
# every time); -exec cp copies it here.
go run -exec cp ./cmd/hashlined "$tmp/hashlined"
"${GRPCURL[@]}" -version >/dev/null 2>&1 || true
mkdir "$tmp/ws"
printf 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n' >"$tmp/ws/main.go"
"$tmp/hashlined" serve --root "$tmp/ws" --listen 127.0.0.1:0 >"$tmp/out" 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do grep -q 'serving' "$tmp/out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's/.* on \(.*\)$/\1/p' "$tmp/out")
[ -n "$addr" ] || { echo "server did not start:"; cat "$tmp/log"; exit 1; }
call() { "${GRPCURL[@]}" -plaintext "$@"; }
fail() { echo "smoke: FAIL: $*"; exit 1; }

call "$addr" list | grep -qx 'hashline.v1.FileService' || fail "list does not show hashline.v1.FileService"
# Reflection carries the .proto comments (server/reflection.go).
desc=$(call "$addr" describe hashline.v1.FileService.Edit)
echo "$desc" | grep -q 'Edit applies a batch of reference-based edits' || fail "describe shows no comment: $desc"
read=$(call -d '{"path":"main.go"}' "$addr" hashline.v1.FileService/Read)
echo "$read" | grep -q '"text": "1:' || fail "Read has no tagged text: $read"
ref=$(echo "$read" | sed -n 's/.*"text": "\(.*\)".*/\1/p' | tr -d '\n' | sed 's/\\n/\n/g' | sed -n '4p' | cut -d'|' -f1)
[ -n "$ref" ] || fail "no ref for line 4 in: $read"
edit=$(call -d "{\"path\":\"main.go\",\"edits\":[{\"replace\":{\"start\":\"$ref\",\"text\":\"\\tprintln(\\\"hello\\\")\"}}]}" "$addr" hashline.v1.FileService/Edit)
echo "$edit" | grep -q 'hello' || fail "Edit did not apply: $edit"
grep -q 'println("hello")' "$tmp/ws/main.go" || fail "file on disk not edited"
# The same ref again is stale now: ABORTED with a StaleRef detail.
if stale=$(call -d "{\"path\":\"main.go\",\"edits\":[{\"replace\":{\"start\":\"$ref\",\"text\":\"x\"}}]}" "$addr" hashline.v1.FileService/Edit 2>&1); then
  fail "stale edit succeeded: $stale"
fi
echo "$stale" | grep -q 'Code: Aborted' || fail "stale edit is not ABORTED: $stale"
echo "$stale" | grep -q 'hashline.v1.StaleRef' || fail "stale edit has no StaleRef detail: $stale"
echo "$stale" | grep -q '>>>' || fail "stale message has no >>> view: $stale"
grep=$(call -d '{"pattern":"hello"}' "$addr" hashline.v1.FileService/Grep)
echo "$grep" | grep -q '"match": true' || fail "Grep found nothing: $grep"
call "$addr" grpc.health.v1.Health/Check | grep -q SERVING || fail "health is not SERVING"
kill -TERM "$pid"; wait "$pid" || fail "server did not exit cleanly on SIGTERM"
pid=
echo "smoke: 1 passed, 0 failed"
