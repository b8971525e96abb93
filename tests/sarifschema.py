"""The SARIF 2.1.0 JSON Schema, from a package that ships it (fetched once with `npm pack`).

No Python package carries the OASIS schema; the npm package `@datadog/datadog-ci` 2.48.0 ships
the final 2.1.0 schema as a file. It is fetched without its dependencies, checked against the
digest below and kept beside the ajv check's node_modules (ignored by git).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from .conftest import ROOT

PACKAGE = "@datadog/datadog-ci@2.48.0"
MEMBER = "package/dist/commands/sarif/json-schema/sarif-schema-2.1.0.json"
SHA256 = "10666d46649b52e262001e70d43e6c52f7c0279ca3dbdfe9a7dc2e4071556454"
CACHE = ROOT / "tests" / "ajv" / "node_modules" / ".sarif" / "sarif-schema-2.1.0.json"


def _fetch() -> bytes | None:
    if shutil.which("npm") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            ["npm", "pack", PACKAGE, "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        tarballs = list(Path(tmp).glob("*.tgz"))
        if proc.returncode != 0 or not tarballs:
            return None
        with tarfile.open(tarballs[0]) as tar:
            member = tar.extractfile(MEMBER)
            return None if member is None else member.read()


def sarif_schema() -> dict[str, Any] | None:
    """The schema, or None when it cannot be had (no npm, no registry)."""
    data = CACHE.read_bytes() if CACHE.is_file() else _fetch()
    if data is None or hashlib.sha256(data).hexdigest() != SHA256:
        return None
    if not CACHE.is_file():
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_bytes(data)
    schema: dict[str, Any] = json.loads(data)
    return schema
