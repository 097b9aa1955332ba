#!/usr/bin/env python3
"""Assembles the extension's install and upgrade scripts from sql/.

One script serves every path: sql/head.sql, then each sql/incremental/NNN-*.sql wrapped so it runs
once per database (recorded with its sha256 in memory_internal._migration), then every
sql/idempotent/<subsystem>/NNN-*.sql (create or replace, re-run on each install and upgrade) in the order
of their numbers, which are unique across the folders, then sql/tail.sql. A NNN-*.toml file there declares
a list of like things (settings, a recall signal, comments) as data: declarations.py writes its SQL, which
stands at its number.
The same text is written as agent_memory--X.sql and as agent_memory--P--X.sql for each released
version P in extension/released/, so an upgrade runs exactly what a fresh install runs.

Released incremental files are frozen: if one differs from the hash its release recorded, the
build fails.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import itertools
import re
import sys
from pathlib import Path

from declarations import BuildError, declaration_sql

ROOT = Path(__file__).resolve().parents[2]
SQL = ROOT / "sql"
EXTENSION = ROOT / "extension"
EMBEDDER = ROOT / "plpython" / "agent_memory_db" / "embedder.py"
BODY_TAG = "$migration_body$"
GUARD = '\\echo Use "CREATE EXTENSION agent_memory" to load this file. \\quit'
# What a PL/Python function of the extension runs first (the placeholder @load_python@ at the top of its body):
# load the in-database package once per session (memory_internal._load_python, operations/001-python.sql).
LOAD_PYTHON = 'if GD.get("agent_memory_version") is None:\n    plpy.execute("select memory_internal._load_python()")'
# Releases before 0.3.0 kept the function in schema memory.
RECORDED = re.compile(r"select memory(?:_internal)?\._apply_migration\(\s*'([^']+)',\s*'([0-9a-f]{64})'")


def control_version(control: Path) -> str:
    match = re.search(r"^default_version\s*=\s*'([^']+)'", control.read_text(), re.MULTILINE)
    if not match:
        raise BuildError(f"{control} has no default_version")
    return match.group(1)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def released_versions(released: Path) -> dict[str, Path]:
    found = {}
    for script in released.glob("agent_memory--*.sql"):
        match = re.fullmatch(r"agent_memory--(\d+\.\d+\.\d+)\.sql", script.name)
        if match:
            found[match.group(1)] = script
    return dict(sorted(found.items(), key=lambda item: version_key(item[0])))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def check_frozen(incremental: list[Path], released: dict[str, Path]) -> None:
    current = {path.name: sha256(path.read_text()) for path in incremental}
    for version, script in released.items():
        for name, recorded in RECORDED.findall(script.read_text()):
            if name not in current:
                raise BuildError(f"sql/incremental/{name} was released in {version} and must not be removed")
            if current[name] != recorded:
                raise BuildError(
                    f"sql/incremental/{name} was released in {version} and has changed since "
                    f"(sha256 {recorded} then, {current[name]} now); add a new incremental file instead"
                )


def substitute(text: str, values: dict[str, str]) -> str:
    for token, value in values.items():
        text = text.replace(token, value)
    leftover = re.search(r"@[a-z_]+@", text)
    if leftover:
        raise BuildError(f"unknown placeholder {leftover.group(0)}")
    return text


def migration_call(path: Path, version: str) -> str:
    body = path.read_text()
    if BODY_TAG in body:
        raise BuildError(f"{path} contains {BODY_TAG}, which the build uses to quote it")
    return (
        f"-- sql/incremental/{path.name}\n"
        f"select memory_internal._apply_migration('{path.name}', '{sha256(body)}', '{version}', {BODY_TAG}\n"
        f"{body.rstrip()}\n{BODY_TAG});\n"
    )


def idempotent_files(folder: Path) -> list[Path]:
    """sql/idempotent/<subsystem>/NNN-*.sql in the order of their numbers; a number used twice is an error."""
    files = sorted(
        [*folder.glob("*/[0-9][0-9][0-9]-*.sql"), *folder.glob("*/[0-9][0-9][0-9]-*.toml")],
        key=lambda path: path.name,
    )
    loose = sorted(path.name for path in folder.glob("*.sql"))
    if loose:
        raise BuildError(f"sql/idempotent/ holds files outside a subsystem's folder: {', '.join(loose)}")
    for before, after in itertools.pairwise(files):
        if before.name[:3] == after.name[:3]:
            raise BuildError(f"{before.relative_to(ROOT)} and {after.relative_to(ROOT)} have the same number")
    return files


def local_model() -> dict[str, str]:
    """The local embedder's model name and dimensions, as the in-database package that loads its files writes
    them (plpython/agent_memory_db/embedder.py): the one place they are written."""
    found = {}
    for node in ast.parse(EMBEDDER.read_text()).body:
        match node:
            case ast.Assign(targets=[ast.Name(id="MODEL_NAME" | "DIMENSIONS" as name)], value=ast.Constant(value)):
                found[name] = str(value)
    if set(found) != {"MODEL_NAME", "DIMENSIONS"}:
        raise BuildError(f"{EMBEDDER} must set MODEL_NAME and DIMENSIONS to constants")
    return {"@local_model@": found["MODEL_NAME"], "@local_dimensions@": found["DIMENSIONS"]}


def idempotent_part(path: Path, values: dict[str, str]) -> str:
    text = declaration_sql(path, ROOT) if path.suffix == ".toml" else path.read_text()
    return f"-- {path.relative_to(ROOT)}\n" + substitute(text, values)


def assemble(version: str, python_dir: str) -> str:
    incremental = sorted((SQL / "incremental").glob("[0-9][0-9][0-9]-*.sql"))
    idempotent = idempotent_files(SQL / "idempotent")
    check_frozen(incremental, released_versions(EXTENSION / "released"))
    values = {"@extversion@": version, "@python_dir@": python_dir, "@load_python@": LOAD_PYTHON} | local_model()
    parts = [
        f"-- agent_memory {version}: assembled by extension/tools/assemble.py from sql/; do not edit.",
        GUARD,
        "-- sql/head.sql\n" + (SQL / "head.sql").read_text(),
        *(migration_call(path, version) for path in incremental),
        *(idempotent_part(path, values) for path in idempotent),
        "-- sql/tail.sql\n" + (SQL / "tail.sql").read_text(),
    ]
    return "\n".join(part.rstrip() + "\n" for part in parts)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-dir", required=True, help="where the in-database Python package is installed")
    parser.add_argument("--out", type=Path, default=EXTENSION / "build")
    args = parser.parse_args(argv)
    try:
        version = control_version(EXTENSION / "agent_memory.control")
        script = assemble(version, args.python_dir)
    except BuildError as exc:
        print(f"assemble: {exc}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    names = [f"agent_memory--{version}.sql"]
    names += [
        f"agent_memory--{old}--{version}.sql"
        for old in released_versions(EXTENSION / "released")
        if version_key(old) < version_key(version)
    ]
    for name in names:
        (args.out / name).write_text(script)
    print(f"assembled {', '.join(names)} in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
