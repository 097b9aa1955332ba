"""Recall kept to tool results by tool and status, as a tenant-bound role: from every list (full text, vectors,
sessions), never a memory or what people said, the tool named by the call the result answers."""

import psycopg
import pytest
from psycopg.types.json import Json

CALLS = [
    {"role": "user", "content": "Deploy the billing service to staging"},
    {
        "role": "assistant",
        "content": "Deploying billing to staging now.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "make deploy"}'}},
            {"id": "c2", "name": "read", "input": {"path": "deploy.yaml"}},
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "billing deploy failed: permission denied",
        "status": "error",
        "duration_ms": 900,
    },
    {"role": "tool", "tool_call_id": "c2", "content": "billing deploy target: staging", "status": "success"},
    {
        "role": "assistant",
        "content": "The billing deploy failed with permission denied.",
        "tool_calls": [{"id": "c3", "name": "bash"}],
    },
    {"role": "tool", "tool_call_id": "c3", "content": "billing deploy retried: done", "status": "success"},
]


@pytest.fixture
def acme(db, logins):
    conn = logins.create(tenant="acme")
    conn.execute("select memory.commit('deploys', %s, agent_id => 'ops', enrich => 'now')", (Json(CALLS),))
    conn.execute("select memory.remember('Billing deploys need the deploy role', agent_id => 'ops')")
    return conn


def recalled(conn, **filters):
    names = "".join(f", {name} => %({name})s" for name in filters)
    return [
        content
        for (content,) in conn.execute(
            f"select content from memory.recall('billing deploy permission', agent_id => 'ops'{names})", filters
        ).fetchall()
    ]


def test_recall_keeps_to_the_tools_and_statuses_asked_for(acme):
    assert len(recalled(acme)) > 3  # unfiltered: what was said, the results and the memory
    assert recalled(acme, tools=["bash"], tool_statuses=["error"]) == ["billing deploy failed: permission denied"]
    assert sorted(recalled(acme, tools=["bash"])) == [
        "billing deploy failed: permission denied",
        "billing deploy retried: done",
    ]
    assert sorted(recalled(acme, tool_statuses=["success"])) == [
        "billing deploy retried: done",
        "billing deploy target: staging",
    ]
    assert recalled(acme, tools=["read", "grep"]) == ["billing deploy target: staging"]
    assert recalled(acme, tools=["read"], tool_statuses=["error", "timeout"]) == []


def test_the_filter_holds_on_the_vector_list_alone_and_at_session_level(acme):
    # No word in common with any turn: the candidates come from the vector lists alone.
    assert acme.execute(
        "select count(*) from memory.chunks where tsv @@ plainto_tsquery('english', 'authorization trouble shipping')"
    ).fetchone() == (0,)
    hits = acme.execute(
        "select content from memory.recall('authorization trouble shipping', tools => array['bash'],"
        " tool_statuses => array['error'])"
    ).fetchall()
    assert hits == [("billing deploy failed: permission denied",)]
    hits = acme.execute(
        "select content from memory.recall('billing deploy', level => 'session', tools => array['read'])"
    ).fetchall()
    assert hits == [("billing deploy target: staging",)]
    explained = acme.execute(
        "select content from memory.explain_recall('billing deploy', tool_statuses => array['error'])"
    ).fetchall()
    assert explained == [("billing deploy failed: permission denied",)]


def test_the_setting_filters_every_call_and_a_bad_status_is_named(acme):
    acme.execute("""set memory.recall_tools = '["read"]'""")
    assert recalled(acme) == ["billing deploy target: staging"]
    acme.execute("reset memory.recall_tools")
    with pytest.raises(psycopg.errors.RaiseException, match=r'"recall_tool_statuses" must be a list of values among'):
        recalled(acme, tool_statuses=["failed"])


def test_the_tools_recall_reads_are_those_the_view_lists(acme):
    # A tenant reads memory.tool_executions itself: the view calls no function it may not.
    listed = acme.execute("select tool, status from memory.tool_executions order by result_turn_id").fetchall()
    assert listed == [("bash", "error"), ("read", "success"), ("bash", "success")]
