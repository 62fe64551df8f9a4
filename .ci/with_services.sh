#!/usr/bin/env bash
# Runs a command (the test suite) with the services the tests need: installs Debian's
# PostgreSQL and Chromium when missing and we are root, starts a throwaway PostgreSQL
# cluster on 127.0.0.1 (exported as AVERITEC_TEST_POSTGRES_URL) and removes it on exit.
# Used by `make test`, so a developer's `make test` and CI run the same suite.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/postgres.sh
if [ "$(id -u)" = 0 ]; then
  ensure_ci_packages
fi
trap stop_test_postgres EXIT
if ! start_test_postgres; then
  echo "make test: PostgreSQL could not be started; the PostgreSQL store tests skip (fail under CI=true)" >&2
fi
export AVERITEC_TEST_ARTIFACTS="${AVERITEC_TEST_ARTIFACTS:-$PWD/test-artifacts}"
"$@"
