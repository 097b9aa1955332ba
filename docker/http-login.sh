#!/bin/bash
# Runs once, after 10-agent-memory.sql, when the container initializes an empty data directory: the HTTP
# server's login memory_server (a member of memory_http), when MEMORY_SERVER_PASSWORD is set.
set -euo pipefail
if [ -n "${MEMORY_SERVER_PASSWORD:-}" ]; then
  psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "${POSTGRES_DB:-$POSTGRES_USER}" \
       -v password="$MEMORY_SERVER_PASSWORD" <<'SQL'
create role memory_server login password :'password';
grant memory_http to memory_server;
SQL
fi
