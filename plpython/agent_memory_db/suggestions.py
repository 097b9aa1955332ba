"""The known name closest to a misspelt one, for errors that say "did you mean ...?"."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like `name` (difflib's ratio at least 0.6), or None when none is close."""
    matches = difflib.get_close_matches(name.lower(), list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None
