# Sourced by .ci/run: a throwaway PostgreSQL cluster for the leaderboard store tests.
# start_test_postgres exports AVERITEC_TEST_POSTGRES_URL; stop_test_postgres removes it all.
# Debian's cluster tools refuse to run as root, so the cluster belongs to the `postgres` user.

find_pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

ensure_ci_packages() {
  # Installed only when missing (CI runs as root on a fresh Debian machine).
  local missing=()
  find_pg_bin >/dev/null || missing+=(postgresql)
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "CI: installing ${missing[*]}" >&2
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi
  # pdflatex for the leaderboard's LaTeX-export test (15 packages without the recommends)
  if ! command -v pdflatex >/dev/null; then
    echo "CI: installing texlive-latex-base" >&2
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends texlive-latex-base
  fi
}

start_test_postgres() {
  local bin port
  bin="$(find_pg_bin)" || { echo "CI: PostgreSQL not installed" >&2; return 1; }
  PG_TMP="$(mktemp -d /tmp/averitec-pg.XXXXXX)"
  chmod 755 "$PG_TMP"
  mkdir "$PG_TMP/data" "$PG_TMP/sock"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres:postgres "$PG_TMP/data" "$PG_TMP/sock"
    PG_AS=(runuser -u postgres --)
  else
    PG_AS=()
  fi
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "${PG_AS[@]}" "$bin/initdb" -D "$PG_TMP/data" -U averitec --auth=trust -E UTF8 >"$PG_TMP/initdb.log" 2>&1 \
    || { cat "$PG_TMP/initdb.log" >&2; return 1; }
  "${PG_AS[@]}" "$bin/pg_ctl" -D "$PG_TMP/data" -l "$PG_TMP/sock/server.log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_TMP/sock -c fsync=off" start >/dev/null \
    || { cat "$PG_TMP/sock/server.log" >&2; return 1; }
  PG_BIN="$bin"
  export AVERITEC_TEST_POSTGRES_URL="postgresql+psycopg://averitec@127.0.0.1:$port/postgres"
  echo "CI: throwaway PostgreSQL at $AVERITEC_TEST_POSTGRES_URL" >&2
}

stop_test_postgres() {
  if [ -n "${PG_TMP:-}" ] && [ -d "$PG_TMP" ]; then
    "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_TMP/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$PG_TMP"
  fi
}
