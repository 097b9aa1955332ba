"""What `agent-memory db status` and `db upgrade --check` say of the extension in a database
(agent_memory.upgrade.ExtensionState)."""

import pytest

from agent_memory.upgrade import ExtensionState


@pytest.mark.parametrize(
    ("state", "pending", "said"),
    [
        (ExtensionState("app", False, None, None, None), False, "agent_memory is not on this server's disk"),
        (ExtensionState("app", True, None, "0.4.0", None), False, "0.4.0 is on disk, not installed in database app"),
        (ExtensionState("app", True, "0.4.0", "0.4.0", None), False, "0.4.0 is installed in database app, the version"),
        (
            ExtensionState("app", True, "0.2.0", "0.4.0", "0.2.0--0.3.0--0.4.0"),
            True,
            "`agent-memory db upgrade` (alter extension agent_memory update, after creating the extensions it requires)"
            " applies 0.2.0 -> 0.3.0 -> 0.4.0",
        ),
        (ExtensionState("app", True, "0.9.0", "0.4.0", None), False, "with no update path between them"),
    ],
)
def test_each_state_says_what_to_do(state, pending, said):
    assert state.pending is pending
    assert said in state.describe()
