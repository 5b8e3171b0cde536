#!/usr/bin/env bash
# Runs every check CI runs: formatting, vet, and all tests with the race
# detector against real embedded nats-servers. Needs only Go (1.26+); the
# modules come from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-}"

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
go vet ./...
# -p 2: the machines have two cores and every package starts its own servers.
# The fault tests in integration/ write one summary line each (slots
# expected, fired, duplicates, lost), printed after the run.
export JETSCHED_FAULT_SUMMARY="$(mktemp)"
trap 'rm -f "$JETSCHED_FAULT_SUMMARY"' EXIT
status=0
go test -race -count=1 -p 2 -timeout 12m ./... || status=$?
if [ -s "$JETSCHED_FAULT_SUMMARY" ]; then
  echo "fault test summaries:"
  sort "$JETSCHED_FAULT_SUMMARY"
fi
exit $status
