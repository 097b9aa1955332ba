"""The body of a PL/pgSQL function that does what the body of a SQL function does, for Citus.

Citus plans no statement of a SQL function that reads one of its tables with the function's parameters in it
(it plans a statement before the parameters' values are known, and a SQL function's statements are planned so);
PL/pgSQL's statements it plans with their values. plpgsql_body(body, returns, result) keeps the statements as
they are, in order, and ends with what the last one gives, by returns:
  'set'    every row of the last statement (return query)
  'void'   nothing: a statement that begins with select is run for its effects (perform)
  'value'  the last statement's first row (null without one) into a variable of type result, returned
  'out'    the last statement's first row into the output parameters named in result (comma-separated)
A name means what it meant: where a parameter and a column share it, the column (#variable_conflict use_column),
as in a SQL function. The statements name the caller's tenant by a variable read once, not by a call of
memory.current_tenant() (Citus routes a statement by a value).

prepared_body(body, purpose, types) makes the body of a PL/pgSQL function of one statement, which names the
function's parameters by position ($1 the tenant), into one that runs that statement prepared once per session on
the tenant's shards on a Citus node (memory_internal._prepared), its parameters' values as literals, into the same
variables when it ends with `into ...`.
"""

from __future__ import annotations

import re

RETURNS = ("set", "void", "value", "out")
# The tenant the caller acts for: read once, into v_tenant, which the statements name instead (a value, as Citus
# routes a statement by).
TENANT_CALL = "memory.current_tenant()"
_DOLLAR_TAG = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_WORD = re.compile(r"[A-Za-z_]+")
_ONE_STATEMENT = re.compile(r"^\s*begin\b(?P<statement>.*?);?\s*end;?\s*$", re.IGNORECASE | re.DOTALL)
_INTO_AT_END = re.compile(r"\s+into\s+(?P<targets>[a-z_][a-z0-9_]*(?:\s*,\s*[a-z_][a-z0-9_]*)*)\s*$", re.IGNORECASE)


def statements(body: str) -> list[str]:
    """The statements of a SQL function's body, split at each semicolon outside quotes and comments; those that
    hold nothing but comments and white space are left out."""
    found: list[str] = []
    start = 0
    meaningful = False
    for begin, end, code in _segments(body):
        if not code:
            meaningful = meaningful or not body.startswith(("--", "/*"), begin)
            continue
        for position in range(begin, end):
            if body[position] == ";":
                if meaningful:
                    found.append(body[start:position].strip())
                start, meaningful = position + 1, False
            else:
                meaningful = meaningful or not body[position].isspace()
    if meaningful:
        found.append(body[start:].strip())
    return found


def _segments(body: str):
    """(start, end, code) for each run of code and each quoted string, quoted name or comment, in order."""
    start = position = 0
    while position < len(body):
        char = body[position]
        if body.startswith("--", position):
            end = body.find("\n", position)
            end = len(body) if end < 0 else end + 1
        elif body.startswith("/*", position):
            end = _comment_end(body, position)
        elif char in "'\"":
            end = _quoted_end(body, position, escapes=char == "'" and _escape_string(body, position))
        elif char == "$" and (tag := _DOLLAR_TAG.match(body, position)) and not _in_word(body, position):
            close = body.find(tag.group(0), tag.end())
            if close < 0:
                raise ValueError(f"agent_memory: a dollar-quoted string ({tag.group(0)}) that does not end")
            end = close + len(tag.group(0))
        else:
            position += 1
            continue
        if start < position:
            yield start, position, True
        yield position, end, False
        start = position = end
    if start < len(body):
        yield start, len(body), True


def plpgsql_body(body: str, returns: str, result: str | None = None) -> str:
    """The PL/pgSQL body that runs a SQL function's statements and returns what the function returns."""
    if returns not in RETURNS:
        raise ValueError(f"agent_memory: returns must be one of {', '.join(RETURNS)}, got {returns!r}")
    if returns in ("value", "out") and not result:
        raise ValueError(f"agent_memory: a function that returns {returns} needs its result named")
    named = _in_code(_in_code(body, f"(select {TENANT_CALL})", "v_tenant"), TENANT_CALL, "v_tenant")
    parts = statements(named)
    if not parts:
        raise ValueError("agent_memory: a SQL function's body without a statement")
    *before, last = parts
    lines = [_run(statement) for statement in before]
    declare = "    v_tenant text := memory.current_tenant();\n" if named != body else ""
    if returns == "set":
        lines.append(f"return query {last}")
    elif returns == "void":
        lines.append(_run(last))
    elif returns == "value":
        declare += f"    v_result {result};\n"
        lines += [f"{last}\n    into v_result", "return v_result"]
    else:
        lines += [f"{last}\n    into {result}", "return"]
    declare = "declare\n" + declare if declare else ""
    return "#variable_conflict use_column\n" + declare + "begin\n" + "".join(f"{line};\n" for line in lines) + "end"


def _in_code(body: str, old: str, new: str) -> str:
    """The body with old replaced by new where it is code (not in a string, a quoted name or a comment)."""
    return "".join(
        body[start:end].replace(old, new) if code else body[start:end] for start, end, code in _segments(body)
    )


def _run(statement: str) -> str:
    """A statement run for its effects: PL/pgSQL runs a select so only as perform."""
    keyword = _first_word(statement)
    if keyword is not None and keyword.group(0).lower() == "select":
        return statement[: keyword.start()] + "perform" + statement[keyword.end() :]
    return statement


def _first_word(statement: str) -> re.Match[str] | None:
    position = 0
    while position < len(statement):
        if statement.startswith("--", position):
            end = statement.find("\n", position)
            position = len(statement) if end < 0 else end + 1
        elif statement.startswith("/*", position):
            position = _comment_end(statement, position)
        elif statement[position].isspace():
            position += 1
        else:
            return _WORD.match(statement, position)
    return None


def _comment_end(text: str, position: int) -> int:
    depth = 0
    while position < len(text):
        if text.startswith("/*", position):
            depth, position = depth + 1, position + 2
        elif text.startswith("*/", position):
            depth, position = depth - 1, position + 2
            if depth == 0:
                return position
        else:
            position += 1
    raise ValueError("agent_memory: a comment (/* ... */) that does not end")


def _quoted_end(text: str, position: int, escapes: bool) -> int:
    quote = text[position]
    position += 1
    while position < len(text):
        if escapes and text[position] == "\\":
            position += 2
        elif text[position] == quote:
            if text.startswith(quote * 2, position):
                position += 2
            else:
                return position + 1
        else:
            position += 1
    raise ValueError(f"agent_memory: a quoted name or string ({quote}...) that does not end")


def _escape_string(text: str, position: int) -> bool:
    """Whether the string that starts at position is an escape string (E'...')."""
    return position > 0 and text[position - 1] in "eE" and not _in_word(text, position - 1)


def _in_word(text: str, position: int) -> bool:
    return position > 0 and (text[position - 1].isalnum() or text[position - 1] in "_$")


def prepared_body(body: str, purpose: str, types: list[str]) -> str:
    """The body that runs the one statement of a PL/pgSQL body prepared on the tenant's shards (see above)."""
    shape = _ONE_STATEMENT.match(body)
    parts = statements(shape.group("statement")) if shape else []
    if len(parts) != 1:
        raise ValueError("agent_memory: a body to prepare is begin, one statement, end")
    if not types or not purpose.isidentifier():
        raise ValueError("agent_memory: a prepared statement needs a purpose (a name) and its parameters' types")
    statement, into = parts[0], ""
    if found := _INTO_AT_END.search(statement):
        statement, into = statement[: found.start()], f"\n    into {found.group('targets')}"
    tag = "$sql$"
    while tag in statement:
        tag = f"${tag[1:-1]}_$"
    literals = ", ".join(["%L"] * len(types))
    arguments = ", ".join(f"${n}" for n in range(1, len(types) + 1))
    names = ", ".join(f"'{name}'" for name in types)
    return (
        "begin\n"
        f"    execute format(\n        'execute %I({literals})',\n"
        f"        memory_internal._prepared('{purpose}', {tag}\n{statement}\n{tag}, array[{names}], $1),\n"
        f"        {arguments}\n    ){into};\n"
        "end"
    )
