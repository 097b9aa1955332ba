"""Distributing the tables (memory_internal._distribute()) where there is no Citus: an error that says what it
needs; and a superuser's call only."""

import psycopg
import pytest


def test_distributing_without_citus_is_an_error_that_says_how_to_get_it(db):
    with pytest.raises(psycopg.errors.FeatureNotSupported, match="distributing needs Citus") as raised:
        db.execute("select memory_internal._distribute()")
    assert "citus_add_node" in raised.value.diag.message_hint
    db.rollback()
    assert db.execute("select count(*) from pg_policy where polname = 'tenant_isolation'").fetchone()[0] > 20


def test_no_role_but_a_superuser_may_distribute(db, logins):
    for grant in ("memory_admin", "memory_tenant"):
        role = logins.create(tenant="acme" if grant == "memory_tenant" else None, grant=grant)
        with pytest.raises(
            psycopg.errors.InsufficientPrivilege,
            match=r"permission denied for (function _distribute|schema memory_internal)",
        ):
            role.execute("select memory_internal._distribute()")
