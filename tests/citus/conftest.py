"""Fixtures of the Citus suite: the cluster (cluster.py), made and distributed once per run."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from cluster import COORDINATOR, NODES, CitusNode, distributed_database
from psycopg import sql

ADMIN = "citus_admin"


@pytest.fixture(scope="session")
def cluster() -> Iterator[list[CitusNode]]:
    """The three nodes, running, with a fresh database in which the extension is created and distributed."""
    started = [node.start() for node in NODES]
    try:
        distributed_database()
        yield NODES
    finally:
        for node, was_started in zip(NODES, started, strict=True):
            if was_started:
                node.stop()


@pytest.fixture
def coordinator(cluster: list[CitusNode]) -> Iterator[psycopg.Connection]:
    """A superuser's connection to the coordinator."""
    with COORDINATOR.connect() as conn:
        yield conn


@pytest.fixture
def admin(coordinator) -> Iterator[str]:
    """A login granted memory_admin, made on the coordinator (Citus makes it, and the grant, on every node)."""
    if coordinator.execute("select 1 from pg_roles where rolname = %s", (ADMIN,)).fetchone() is None:
        coordinator.execute(sql.SQL("create role {} login").format(sql.Identifier(ADMIN)))
    coordinator.execute(sql.SQL("grant memory_admin to {}").format(sql.Identifier(ADMIN)))
    yield ADMIN
