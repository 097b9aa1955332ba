"""docs/http.md's curl examples run as written against a real server, in order, with a key of tenant acme:
each must answer 2xx (curl --fail-with-body)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

DOC = (Path(__file__).resolve().parents[2] / "docs" / "http.md").read_text()


def endpoint_examples() -> list[str]:
    section = DOC.split("\n## Endpoints\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def test_every_curl_example_of_the_endpoints_runs(served, tmp_path):
    examples = endpoint_examples()
    assert len(examples) == 5
    environment = {**os.environ, "AM": served.url, "KEY": served.key("acme")}
    for example in examples:
        ran = subprocess.run(
            ["bash", "-e", "-c", example], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
        )
        assert ran.returncode == 0, f"{example}\n{ran.stdout}\n{ran.stderr}"
    exported = [json.loads(line) for line in (tmp_path / "acme.jsonl").read_text().splitlines()]
    assert exported[0]["record"] == "header"
    assert {"session", "memory"} <= {record["record"] for record in exported}
