"""On the worker that holds a tenant, the API's statements run on the tenant's shards as on one node: every shard's
tenant policy checks once per statement (with subselects, as on one node: Citus takes none in its tables'
policies), a shard made anew by a move too (test_shard_move.py)."""

from __future__ import annotations

import re

from cluster import WORKERS

ONCE_PER_STATEMENT = "( SELECT memory.current_tenant() AS current_tenant)"


def test_every_shards_tenant_policy_checks_once_per_statement_and_each_table_once_per_row(cluster):
    for worker in WORKERS:
        with worker.connect() as conn:
            conn.execute("set citus.override_table_visibility = off")
            policies = conn.execute(
                "select p.polrelid::regclass::text, pg_get_expr(p.polqual, p.polrelid) from pg_policy as p "
                "where p.polname in ('tenant_isolation', 'tenant_settings') "
                "and p.polrelid::regclass::text like 'memory.%'"
            ).fetchall()
            shards = {name: check for name, check in policies if re.search(r"_[0-9]+$", name)}
            tables = {name: check for name, check in policies if name not in shards}
            assert len(shards) > 100 and all(ONCE_PER_STATEMENT in check for check in shards.values())
            # Citus's own tables keep plain calls (it refuses a subquery in a statement that writes one).
            assert "memory.turns" in tables and not any("SELECT" in check for check in tables.values())
            # The bindings' copy keeps its own policy alone.
            assert not any(name.startswith("memory.tenant_roles_") for name in shards)
