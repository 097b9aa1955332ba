"""Python that runs inside PostgreSQL for the agent_memory extension.

Nothing here imports ``plpy``: PL/Python function bodies import these modules, convert their
arguments and call plain functions, so all of it is unit-tested without a database.
"""

__version__ = "0.4.0"


class VersionMismatch(RuntimeError):
    """The installed Python package is not the one the extension's SQL was built with."""


def require_version(sql_version: str, python_dir: str) -> None:
    """Fail clearly when the SQL objects and this package come from different releases."""
    if sql_version != __version__:
        raise VersionMismatch(
            f"agent_memory: the extension's SQL is version {sql_version} but the Python package "
            f"loaded from {python_dir} is version {__version__}; run `make install` for the "
            f"release you want, then reconnect"
        )
