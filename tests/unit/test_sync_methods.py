"""Memory's methods are generated from AsyncMemory's (python-client/tools/sync_methods.py)."""

import inspect

import pytest
import sync_methods

from agent_memory import AsyncMemory, Memory
from agent_memory.async_methods import AsyncMethods
from agent_memory.methods import Methods


def test_the_generated_methods_are_current():
    generated = sync_methods.sync_methods(sync_methods.SOURCE.read_text())
    assert generated == sync_methods.TARGET.read_text(), (
        "agent_memory/methods.py is not generated from async_methods.py: run `make client`"
    )


def test_what_a_substitution_cannot_carry_is_refused():
    source = '"""Doc."""\nclass AsyncMethods:\n    async def f(self):\n        async with x:\n            pass\n'
    with pytest.raises(sync_methods.NotAsyncMethods, match="async with"):
        sync_methods.sync_methods(source)


def test_both_clients_have_the_same_methods_and_each_says_what_it_does():
    def public(cls: type) -> dict:
        return {
            name: (str(inspect.signature(method)), inspect.getdoc(method))
            for name, method in inspect.getmembers(cls, inspect.isfunction)
            if not name.startswith("_")
        }

    assert public(AsyncMethods) == public(Methods) and len(public(Methods)) > 30
    assert set(public(AsyncMemory)) - {"open"} == set(public(Memory))
    assert all(doc and "See Memory" not in doc for _, doc in public(Methods).values())
