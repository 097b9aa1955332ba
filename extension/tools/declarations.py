"""The declarations of sql/idempotent/: TOML files the build turns into SQL.

What is a list of like things (settings, recall signals, the comments a DBA reads in \\d+) is written once as
data, and the SQL that declares it is generated here, at the file's number in the install script:

- NNN-settings.toml: each table one setting (a memory_internal._declare_setting call);
- NNN-signal-<name>.toml: one recall signal: the features it reads, its one-expression function and its row;
- NNN-<topic>-features.toml: recall features the pipeline reads or computes, of no one signal;
- NNN-<topic>-comments.toml: [schema.relation] with `table` or `view` (its comment) and its `columns`.

A mistake in a file is a BuildError naming the file, the entry and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import tomllib


class BuildError(Exception):
    pass


IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
SETTING_FIELDS = {"type", "default", "description", "allowed", "minimum", "maximum", "set_by", "checked_by"}
SIGNAL_FIELDS = ("name", "stage", "default_weight", "value", "measures")
FEATURE_FIELDS = {"stage", "type", "expression", "describes"}
SIGNAL_FUNCTION = """create or replace function memory_internal.signal_{name}(c memory.recall_candidate, s jsonb)
returns double precision
language sql
immutable parallel safe
as $signal$
    select {value}
$signal$;"""


def sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def indented(sql: str) -> str:
    """A SQL expression of a declaration as it stands in the generated statement, after `select ` or a
    `$feature$` at four spaces: its lines after the first indented four more."""
    first, *rest = sql.strip("\n").split("\n")
    return "\n".join([first, *(f"    {line}" if line else line for line in rest)])


def load(path: Path, root: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise BuildError(f"{path.relative_to(root)}: {exc}") from exc


def fields_of(table: object, required: tuple[str, ...], allowed: set[str], where: str) -> dict:
    """A declaration's table, checked: it has every required field, no other than the allowed ones, and the
    text fields are strings."""
    if not isinstance(table, dict) or not set(required) <= set(table) <= allowed:
        raise BuildError(f"{where} needs {', '.join(required)}, and may have only {', '.join(sorted(allowed))}")
    texts = [
        name
        for name in (
            "type",
            "description",
            "set_by",
            "checked_by",
            "stage",
            "value",
            "expression",
            "describes",
            "measures",
            "name",
        )
        if name in table
    ]
    if not all(isinstance(table[name], str) for name in texts):
        raise BuildError(f"{where}: {', '.join(texts)} must be strings")
    return table


def number(value: object, where: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BuildError(f"{where} must be a number")
    return value


def settings_sql(path: Path, root: Path) -> str:
    """A subsystem's settings file: one memory_internal._declare_setting call per table."""
    calls = []
    for key, table in load(path, root).items():
        where = f"{path.relative_to(root)}: setting {key}"
        fields = fields_of(table, ("type", "default", "description"), SETTING_FIELDS, where)
        arguments = [
            sql_text(key),
            sql_text(json.dumps(fields["default"], ensure_ascii=False)),
            sql_text(fields["type"]),
            sql_text(fields["description"]),
        ]
        if "allowed" in fields:
            arguments.append(f"allowed => {sql_text(json.dumps(fields['allowed'], ensure_ascii=False))}")
        for name in ("minimum", "maximum"):
            if name in fields:
                arguments.append(f"{name} => {number(fields[name], f'{where}: {name}')}")
        for name in ("set_by", "checked_by"):
            if name in fields:
                arguments.append(f"{name} => {sql_text(fields[name])}")
        calls.append(f"select memory_internal._declare_setting({', '.join(arguments)});")
    return "\n".join(calls)


def features_sql(features: object, where: str) -> str:
    """Recall features, in order (each is an attribute of memory.recall_candidate): one
    memory_internal._define_feature call each. A fusion-stage feature has no expression (fusion computes it)."""
    if not isinstance(features, dict):
        raise BuildError(f"{where}: features must be tables, [features.<name>]")
    calls = []
    for name, table in features.items():
        feature = fields_of(table, ("stage", "type", "describes"), FEATURE_FIELDS, f"{where}: feature {name}")
        if ("expression" in feature) == (feature["stage"] == "fusion"):
            raise BuildError(f"{where}: feature {name} needs an expression unless its stage is fusion, which has none")
        expression = f"$feature${indented(feature['expression'])}$feature$" if "expression" in feature else "null"
        calls.append(
            "select memory_internal._define_feature(\n    "
            + ", ".join(sql_text(value) for value in (name, feature["stage"], feature["type"]))
            + f",\n    {expression},\n    {sql_text(feature['describes'])},"
            + "\n    builtin => true\n);"
        )
    return "\n\n".join(calls)


def features_file_sql(path: Path, root: Path) -> str:
    """A file of the features the pipeline itself reads or computes, those of no one signal."""
    where = str(path.relative_to(root))
    declared = load(path, root)
    if set(declared) != {"features"}:
        raise BuildError(f"{where} may have only [features.<name>]")
    return features_sql(declared["features"], where)


def signal_sql(path: Path, root: Path) -> str:
    """A recall signal's file: its features (in order: each is an attribute of memory.recall_candidate), the
    function that computes its value from them, and its row in the registry."""
    where = str(path.relative_to(root))
    declared = load(path, root)
    if set(declared) - {"signal", "features"}:
        raise BuildError(f"{where} may have only [signal] and [features.<name>]")
    signal = fields_of(declared.get("signal"), SIGNAL_FIELDS, set(SIGNAL_FIELDS), f"{where}: [signal]")
    if path.stem.split("-", 2)[2].replace("-", "_") != signal["name"] or not IDENTIFIER.fullmatch(signal["name"]):
        raise BuildError(f"{where}: the signal's name must be the file's, NNN-signal-<name>.toml")
    parts = [features_sql(declared.get("features", {}), where)] if declared.get("features") else []
    parts.append(SIGNAL_FUNCTION.format(name=signal["name"], value=indented(signal["value"])))
    weight = number(signal["default_weight"], f"{where}: default_weight")
    function = f"memory_internal.signal_{signal['name']}(memory.recall_candidate, jsonb)"
    parts.append(
        "select memory_internal._define_builtin_signal(\n    "
        + ", ".join([sql_text(signal["name"]), sql_text(signal["stage"]), sql_text(function), str(weight)])
        + f",\n    {sql_text(signal['measures'])}\n);"
    )
    return "\n\n".join(parts)


def comments_sql(path: Path, root: Path) -> str:
    """A file of comments: for each [schema.relation], the relation's (under `table` or `view`, which says what
    it is) and its columns' (under `columns`: a subsystem may comment the columns it adds to another's table)."""
    statements = []
    for schema, relations in load(path, root).items():
        if not isinstance(relations, dict):
            raise BuildError(f"{path.relative_to(root)}: {schema} must be a schema's table of relations")
        for relation, table in relations.items():
            where = f"{path.relative_to(root)}: {schema}.{relation}"
            if not isinstance(table, dict):
                raise BuildError(f"{where} must be a table: [{schema}.{relation}]")
            kinds = [kind for kind in ("table", "view") if kind in table]
            columns = table.get("columns", {})
            if len(kinds) > 1 or set(table) - {"table", "view", "columns"} or not (kinds or columns):
                raise BuildError(f"{where} needs its comment under table or view, or its columns', and nothing else")
            texts = [*(table[kind] for kind in kinds), *columns.values()]
            names = [schema, relation, *columns]
            if not all(isinstance(text, str) for text in texts) or not all(map(IDENTIFIER.fullmatch, names)):
                raise BuildError(f"{where}: each comment must be a string, each name in lower case")
            statements += [f"comment on {kind} {schema}.{relation} is {sql_text(table[kind])};" for kind in kinds]
            statements += [
                f"comment on column {schema}.{relation}.{column} is {sql_text(text)};"
                for column, text in columns.items()
            ]
    return "\n".join(statements)


def declaration_sql(path: Path, root: Path) -> str:
    """The SQL of a declarations file, by the kind its name says."""
    if path.name.endswith("-settings.toml"):
        return settings_sql(path, root)
    if path.name.endswith("-comments.toml"):
        return comments_sql(path, root)
    if path.name.endswith("-features.toml"):
        return features_file_sql(path, root)
    if path.name[3:].startswith("-signal-"):
        return signal_sql(path, root)
    raise BuildError(
        f"{path.relative_to(root)}: a declarations file is NNN-settings, NNN-signal-<name>, "
        "NNN-<topic>-features or NNN-<topic>-comments .toml"
    )
