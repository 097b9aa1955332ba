"""Output for people (aligned tables, records) and for scripts (JSON), shared by the CLI and the demo."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import Any


def plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {key: plain(item) for key, item in asdict(value).items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def print_json(value: Any) -> None:
    print(json.dumps(plain(value), default=str, indent=2, ensure_ascii=False))


def _cell(value: Any, width: int) -> str:
    """A value in a table: floats to 3 decimals, times to the minute (2026-11-30 14:05), cut to the width."""
    if isinstance(value, datetime):
        value = f"{value:%Y-%m-%d %H:%M}"
    text = "" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(rows: Sequence[Any], columns: Sequence[str], widths: Mapping[str, int] | None = None) -> None:
    """Rows (dicts or dataclasses) as an aligned table of the given columns, for people."""
    records = [plain(row) for row in rows]
    limits = {column: (widths or {}).get(column, 40) for column in columns}
    cells = [[_cell(record.get(column), limits[column]) for column in columns] for record in records]
    sizes = [max([len(column)] + [len(row[i]) for row in cells]) for i, column in enumerate(columns)]
    print("  ".join(column.ljust(size) for column, size in zip(columns, sizes, strict=True)).rstrip())
    print("  ".join("-" * size for size in sizes))
    for row in cells:
        print("  ".join(cell.ljust(size) for cell, size in zip(row, sizes, strict=True)).rstrip())


def print_record(row: Any) -> None:
    record = plain(row)
    width = max(len(key) for key in record)
    for key, value in record.items():
        print(f"{key:<{width}}  {'' if value is None else value}")


def _signals(components: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    found = components.get("signals")
    return found if isinstance(found, Mapping) else {}


def ranks(components: Mapping[str, Any]) -> str:
    """Where a candidate stood in each fused list (the registry's fusion signals): 'dense #1, lexical #4'."""
    ranked = sorted((name, part["rank"]) for name, part in _signals(components).items() if part.get("rank"))
    return ", ".join(f"{name} #{rank}" for name, rank in ranked)


def signals(components: Mapping[str, Any]) -> str:
    """The boost signals that moved a recall score, from its components: 'session +2.00, trust -0.69'."""
    moved = sorted(
        (name, part.get("contribution"))
        for name, part in _signals(components).items()
        if "rank" not in part and isinstance(part.get("contribution"), int | float) and part.get("contribution")
    )
    return ", ".join(f"{name} {value:+.2f}" for name, value in moved)
