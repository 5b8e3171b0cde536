#!/usr/bin/env bash
# Runs every check CI runs: formatting, vet, and all tests with the race
# detector against real embedded nats-servers. Needs only Go (1.26+); the
# modules come from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")"
export GOFLAGS="${GOFLAGS:-}"

# The TypeScript client's tests (integration/tsclient_test.go) run with
# node and npm; under CI (.ci/run) a missing npm fails that test instead
# of skipping it, so install it here as Chromium is.
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing nodejs and npm for the TypeScript client's tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "note: npm is not installed: the TypeScript client's tests will be skipped (apt-get install -y nodejs npm)"
  fi
fi

# The shipped calendars' conformance test (calendars/) compares us-federal
# with pandas' USFederalHolidayCalendar from Debian's python3-pandas (and
# every calendar with the npm date-holidays, through npm above); install it
# when it is missing, as Chromium is. Under CI a missing one fails the test.
if ! /usr/bin/python3 -c 'import pandas' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing python3-pandas for the calendars' conformance test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pandas >/dev/null
  else
    echo "note: python3-pandas is not installed: us-federal's comparison with pandas will be skipped (apt-get install -y python3-pandas)"
  fi
fi

# The console's browser test drives headless Chromium from the Debian
# package; install it when it is missing (CI runs as root). Elsewhere the
# test is skipped, except under CI where a missing browser fails it.
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium for the console's browser test"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "note: chromium is not installed: the console's browser test will be skipped (apt-get install -y chromium)"
  fi
fi

unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt: these files need formatting:"; echo "$unformatted"; exit 1
fi
# The partition tests (integration/partition) run a 3-node cluster in network
# namespaces: they need root and iproute2 (ip, tc). As root, install iproute2
# when it is missing and load sch_netem when the kernel has it as a module;
# without root or namespaces the tests skip and say why.
if [ "$(id -u)" -eq 0 ]; then
  if ! command -v ip >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
    echo "installing iproute2 (ip, tc) for the partition tests"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null; } ||
      echo "could not install iproute2: the partition tests will skip"
  fi
  if command -v modprobe >/dev/null 2>&1; then modprobe sch_netem 2>/dev/null || true; fi
fi
# -p 2: the machines have two cores and every package starts its own servers.
# The fault tests in integration/ and integration/partition/ write one
# summary line each (slots expected, fired, duplicates, lost), printed after
# the run. The partition tests run at their small size here;
# JETSCHED_PARTITION=full runs the full one (docs/reliability.md).
export JETSCHED_FAULT_SUMMARY="$(mktemp)"
fuzz_log="$(mktemp)"
fuzz_status="$(mktemp)"
checks_log="$(mktemp)"
checks_status="$(mktemp)"
trap 'rm -f "$JETSCHED_FAULT_SUMMARY" "$fuzz_log" "$fuzz_status" "$checks_log" "$checks_status"' EXIT
# go vet, and deploy/'s vet and tests, run beside the tests too, at a lower
# CPU priority than the tests and a higher one than the fuzzing: on a clean
# checkout (an empty build cache) they compiled for ~3 min of wall time
# after the tests, most of it Helm and Kubernetes, while the tests leave
# about a quarter of the two cores idle. deploy/ is a nested module (the
# Helm chart's and the systemd unit's tests, with Helm and Kubernetes
# dependencies kept out of the main module): the root ./... does not
# descend into it. gofmt -l . above already covers its files. Their
# output is printed after the tests'; a failure still fails the run.
(
  cs=0
  nice -n 10 go vet ./... || cs=$?
  (cd deploy && nice -n 10 go vet ./... && nice -n 10 go test -count=1 -timeout 5m ./...) || cs=$?
  echo "$cs" >"$checks_status"
) >"$checks_log" 2>&1 &
checks_pid=$!
# Fuzz the decoders of what anyone can write into the buckets, the admin
# API's handlers and the hand-read stream acknowledgements, a short budget
# each (one target per invocation; the seed corpora also run as plain
# tests below). The budget is a count of inputs, not a time: a time budget
# makes go's fuzzer report "context deadline exceeded" whenever an input
# is still running at the deadline. The counts take ~80 s of two cores on
# a 2-core box; the fast decoders' property tests compare them with the
# reference decoders on generated records in every run as well.
# The fuzzing runs beside the tests, at the lowest CPU priority: the tests
# use 1.4 of the 2 cores on average (many of them wait on slots and
# leases), and the fuzzers take what is left instead of ~80 s of the run's
# own once the tests are done; their output is printed after the tests.
(
  fs=0
  targets=(
    "FuzzDecodeSpec ./pkg/kvstore 10000" "FuzzDecodeState ./pkg/kvstore 10000"
    "FuzzStateDecodeFast ./pkg/kvstore 25000" "FuzzSpecDecodeFast ./pkg/kvstore 15000"
    "FuzzParse ./pkg/calendar 100000" "FuzzAPI ./internal/adminapi 10000"
    "FuzzParseAck ./internal/pipelined 10000" "FuzzDeliveryOf ./internal/jsstore 20000"
    # The hostile-input suite (docs/security.md): records forged in the
    # buckets, the console's handlers and redirects, lease judging, time
    # ranges, nesting depth and working-time arithmetic.
    "FuzzReadTimer ./internal/timers 30000" "FuzzReadCalendar ./pkg/kvstore 20000"
    "FuzzDepth ./internal/strictjson 200000" "FuzzJudge ./internal/fires 20000"
    "FuzzDecideInRange ./internal/fires 4000" "FuzzAddWorkingMatchesWalk ./pkg/calendar 5000"
    "FuzzSafeNext ./internal/console 20000" "FuzzHandlers ./internal/console 2000"
    "FuzzURL ./internal/redact 20000"
  )
  for target in "${targets[@]}"; do
    set -- $target
    # A target that moved would otherwise fuzz nothing and pass.
    # (Captured first: under pipefail, grep -q closing the pipe early
    # would fail the listing with SIGPIPE.)
    listed=$(nice -n 19 go test -list "^$1\$" "$2" 2>&1) || true
    if ! grep -qx "$1" <<<"$listed"; then
      echo "fuzz target $1 not found in $2"; fs=1; continue
    fi
    # -fuzzminimizetime: a new input that widens coverage is minimised
    # for 60 s by default, during which the count stands still.
    nice -n 19 go test -run '^$' -fuzz "^$1\$" -fuzztime "$3x" -fuzzminimizetime 5s "$2" || fs=$?
  done
  echo "$fs" >"$fuzz_status"
) >"$fuzz_log" 2>&1 &
fuzz_pid=$!
status=0
go test -race -count=1 -p 2 -timeout 12m ./... || status=$?
# collect waits for a job run beside the tests, prints its output under a
# title, and fails the run when the job failed (or left no status).
collect() { # pid log status-file title
  wait "$1" || true
  echo "$4:"
  cat "$2"
  local s
  s="$(cat "$3" 2>/dev/null || true)"
  s="${s:-1}"
  if [ "$s" != 0 ]; then
    echo "$4: failed (status $s)"
    status=$s
  fi
}
collect "$checks_pid" "$checks_log" "$checks_status" "go vet, and deploy/'s vet and tests"
collect "$fuzz_pid" "$fuzz_log" "$fuzz_status" "fuzzing"
if [ -s "$JETSCHED_FAULT_SUMMARY" ]; then
  echo "fault test summaries:"
  sort "$JETSCHED_FAULT_SUMMARY"
fi
exit $status
