"""gzip_lines: retention archives as gzipped JSON lines."""

import gzip
import json

import pytest

from agent_memory_db.archive import gzip_lines


def test_lines_come_back_as_written():
    records = [{"record": "header"}, {"record": "session", "content": "naïve café ✓"}]
    data = gzip_lines(json.dumps(r, ensure_ascii=False) for r in records)
    text = gzip.decompress(data).decode("utf-8")
    assert [json.loads(line) for line in text.splitlines()] == records
    assert text.endswith("\n")


def test_the_same_records_give_the_same_bytes():
    assert gzip_lines(["{}", "[1]"]) == gzip_lines(["{}", "[1]"])


def test_no_records_is_an_empty_file():
    assert gzip.decompress(gzip_lines([])) == b""


def test_a_line_break_inside_a_line_is_refused():
    with pytest.raises(ValueError, match="line 2 has a line break inside it"):
        gzip_lines(["{}", '{"a":\n1}'])
