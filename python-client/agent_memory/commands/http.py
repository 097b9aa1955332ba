"""The HTTP server: `agent-memory serve`, and its API keys (`agent-memory keys create|list|revoke`), which an
administrator makes: the role a key stands for is made and bound here when the tenant has none yet."""

from __future__ import annotations

import hashlib
import re
import sys
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from agent_memory.commands import Args, Command, Option, dsn
from agent_memory.errors import InvalidInput, from_psycopg
from agent_memory.formatting import print_json, print_table

DEFAULT_HTTP_PORT = 8420


def serve(args: Args) -> int:
    """Runs the HTTP server (uvicorn) until interrupted."""
    try:
        import uvicorn

        from agent_memory.http.app import build
        from agent_memory.http.service import Limits
    except ImportError as exc:
        raise InvalidInput(
            f'agent-memory serve needs the http extra: pip install "agent-memory[http]" ({exc})'
        ) from exc
    limits = Limits(args.max_request_bytes, args.requests_per_minute)
    app = build(dsn(args), limits, args.max_connections)
    print(f"agent_memory over HTTP on http://{args.host}:{args.http_port} (inspector: /inspector/)", file=sys.stderr)
    uvicorn.run(
        app,
        host=args.host,
        port=args.http_port,
        log_level=args.log_level,
        proxy_headers=True,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    return 0


def default_role(tenant: str) -> str:
    """The role `keys create` makes for a tenant: http_<tenant> (lower case, letters, digits and _; a hash of
    the tenant added when it had to change)."""
    slug = re.sub(r"[^a-z0-9_]", "_", tenant.lower())[:40]
    if slug != tenant:
        slug += "_" + hashlib.sha256(tenant.encode()).hexdigest()[:8]
    return "http_" + slug


def _prepare_role(conn: psycopg.Connection[Any], tenant: str | None, role: str | None) -> str:
    """The key's role, made and bound to the tenant if it does not exist, and granted to memory_http."""
    if role is None:
        if tenant is None:
            raise InvalidInput("keys create needs --tenant (or --role, of a memory_app role that chooses its tenant)")
        role = default_role(tenant)
        if conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone() is None:
            conn.execute(sql.SQL("create role {} nologin").format(sql.Identifier(role)))
            conn.execute(sql.SQL("grant memory_tenant to {}").format(sql.Identifier(role)))
            conn.execute(
                "select memory.bind_tenant_role(%s::regrole, %s)", (sql.Identifier(role).as_string(conn), tenant)
            )
    granted = conn.execute("select pg_has_role('memory_http', %s, 'member') as granted", (role,)).fetchone()
    if not (granted and granted["granted"]):
        conn.execute(sql.SQL("grant {} to memory_http").format(sql.Identifier(role)))
    return role


def keys(args: Args) -> int:
    try:
        with psycopg.connect(dsn(args), row_factory=dict_row) as conn:
            if args.action == "create":
                role = _prepare_role(conn, args.tenant, args.role)
                row = conn.execute(
                    "select * from memory.create_api_key(%s, %s::regrole, %s, %s, %s, %s, %s)",
                    (
                        args.tenant,
                        sql.Identifier(role).as_string(conn),
                        args.label or "",
                        not args.read_only,
                        args.max_request_bytes,
                        args.requests_per_minute,
                        args.expires_at,
                    ),
                ).fetchone()
                assert row is not None
                if args.json:
                    print_json({**row, "role": role, "tenant_id": args.tenant})
                else:
                    print(f"API key {row['key_id']} of tenant {args.tenant or '(chosen per request)'}, role {role}:")
                    print(row["api_key"])
                    print("It is shown only now: keep it.", file=sys.stderr)
            elif args.action == "list":
                found = conn.execute("select * from memory.list_api_keys(%s)", (args.tenant,)).fetchall()
                if args.json:
                    print_json(found)
                else:
                    columns = [
                        "key_id",
                        "key_prefix",
                        "tenant_id",
                        "role_name",
                        "label",
                        "may_write",
                        "created_at",
                        "revoked_at",
                        "last_used_at",
                    ]
                    print_table(found, columns) if found else print("no API keys")
            else:
                if args.key_id is None:
                    raise InvalidInput("keys revoke needs the key's id (keys list shows it)")
                conn.execute("select memory.revoke_api_key(%s)", (args.key_id,))
                print(f"API key {args.key_id} revoked")
    except psycopg.Error as exc:
        raise from_psycopg(exc) from exc
    return 0


COMMANDS: tuple[Command, ...] = (
    Command(
        "serve",
        "serve memory over HTTP: the API, mem0's API and the inspector page (needs the http extra)",
        (
            Option("host", "address to listen on (default 127.0.0.1)", default="127.0.0.1"),
            Option(
                "http_port", f"port to listen on (default {DEFAULT_HTTP_PORT})", type=int, default=DEFAULT_HTTP_PORT
            ),
            Option(
                "max_request_bytes",
                "largest request body of a key that sets none (default 1048576)",
                type=int,
                default=1_048_576,
            ),
            Option(
                "requests_per_minute", "requests a minute of a key that sets none (default 600)", type=int, default=600
            ),
            Option("max_connections", "database connections of the server (default 10)", type=int, default=10),
            Option(
                "log_level",
                "uvicorn's log level (default info)",
                default="info",
                choices=("critical", "error", "warning", "info", "debug"),
            ),
            Option(
                "forwarded_allow_ips",
                "proxies whose X-Forwarded-* headers are trusted (default 127.0.0.1)",
                default="127.0.0.1",
            ),
        ),
        description="Logs in with --dsn (else $DATABASE_URL): a login that is a member of memory_http. Each "
        "request runs as its API key's role (`agent-memory keys create`). See docs/http.md.",
        main=serve,
    ),
    Command(
        "keys",
        "API keys of the HTTP server: create (--tenant, --role), list, revoke KEY_ID (memory_admin)",
        (
            Option("action", positional=True, choices=("create", "list", "revoke")),
            Option("key_id", "the key to revoke", positional=True, optional=True, type=int),
            Option("role", "the role its requests run as (default: http_<tenant>, made and bound if missing)"),
            Option("label", "what the key is for"),
            Option("read_only", "the key may only read", flag=True),
            Option("max_request_bytes", "its largest request body (default: the server's)", type=int),
            Option("requests_per_minute", "its requests a minute (default: the server's)", type=int),
            Option("expires_at", "when it stops working (ISO 8601)", type=datetime.fromisoformat),
        ),
        description="create prints the key once; only its sha256 is kept. --tenant is the key's tenant.",
        main=keys,
    ),
)
