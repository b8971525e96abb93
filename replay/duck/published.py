"""A run's Parquet parts written to an object store (`fleet --output s3://...`; `verify --format parquet
--output s3://...` writes one part, one PUT), so that a reader
never sees half a run: an object store has no folder to rename into place, so each run writes
its parts under a prefix of its own (`OUTPUT/runs/RUN/part-NNNNN.parquet`, each part one PUT:
whole or absent), then the manifest (`OUTPUT/manifest.json`, one PUT) naming them, last.
Readers follow the manifest (`parts`): until it is written they read the last run's parts;
after, this run's. The runs before the previous one are deleted once the manifest is written
(a reader holding the previous manifest still finds its parts).
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from replay.sources.objects import failure, file_system

MANIFEST = "manifest.json"
RUNS = "runs"
SCHEMA = 1


def run_id(started: datetime) -> str:
    """A new run's name: when it started (sorting runs by name sorts them by time), and a
    random suffix (two runs started in the same second stay apart)."""
    return f"{started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def run_prefix(output: str, run: str) -> str:
    return f"{output.rstrip('/')}/{RUNS}/{run}"


def write_part(write: Callable[[Path], Path], out: str) -> str:
    """The part `write` makes in a local folder it is given, uploaded under the prefix `out` (one
    PUT); the part's URL. Raises OSError (objects.failure)."""
    with tempfile.TemporaryDirectory(prefix="schedlog-part-") as tmp:
        local = write(Path(tmp))
        url = f"{out.rstrip('/')}/{local.name}"
        fs, path = file_system(url)
        try:
            fs.put_file(str(local), path)
        except Exception as err:
            raise failure(url, err) from None
    return url


def names_under(prefix: str) -> list[str]:
    """The names of the objects right under `prefix` (as a folder's files: none of its
    sub-prefixes'); [] where there are none. Raises OSError (objects.failure)."""
    fs, root = file_system(prefix.rstrip("/") + "/")
    try:
        found = fs.ls(root.rstrip("/"), detail=True)
    except FileNotFoundError:
        return []
    except Exception as err:
        raise failure(prefix, err) from None
    return [str(f["name"]).rpartition("/")[2] for f in found if f.get("type") == "file"]


def foreign(output: str) -> list[str]:
    """What the prefix `output` holds that no run wrote (its manifest and runs aside): a prefix
    holding other objects is refused, as a folder holding other files is."""
    fs, root = file_system(output.rstrip("/") + "/")
    try:
        names = [str(n) for n in fs.find(root.rstrip("/"))]
    except FileNotFoundError:
        return []
    except Exception as err:
        raise failure(output, err) from None
    base = root.rstrip("/") + "/"
    kept = (base + MANIFEST, base + RUNS + "/")
    return sorted(n[len(base) :] for n in names if not (n == kept[0] or n.startswith(kept[1])))


def publish(output: str, run: str, parts: Sequence[str], rows: int) -> None:
    """Write the manifest naming this run's `parts` (URLs) and its verdict `rows`, last; then delete the runs before
    the previous one. Raises OSError (objects.failure)."""
    base = output.rstrip("/")
    fs, root = file_system(base + "/" + MANIFEST)
    before = manifest(output)
    names = [p.removeprefix(base + "/") for p in sorted(parts)]
    body = {"schema": SCHEMA, "run": run, "parts": names, "rows": rows}
    try:
        fs.pipe_file(root, (json.dumps(body, indent=2) + "\n").encode())
    except Exception as err:
        raise failure(base + "/" + MANIFEST, err) from None
    keep = {run, str(before.get("run", ""))}
    _prune(base, keep)


def _prune(base: str, keep: set[str]) -> None:
    """Delete the runs under `base` not in `keep` (a failure leaves them: they cost only space)."""
    fs, root = file_system(f"{base}/{RUNS}/")
    try:
        runs = [str(n).rstrip("/").rpartition("/")[2] for n in fs.ls(root.rstrip("/"), detail=False)]
        for old in sorted(set(runs) - keep):
            fs.rm(f"{root.rstrip('/')}/{old}", recursive=True)
    except Exception:
        return


def manifest(output: str) -> dict[str, object]:
    """The manifest under `output` ({} where there is none yet). Raises OSError where it cannot
    be read for another reason."""
    url = output.rstrip("/") + "/" + MANIFEST
    fs, path = file_system(url)
    try:
        value = json.loads(fs.cat_file(path))
    except FileNotFoundError:
        return {}
    except Exception as err:
        raise failure(url, err) from None
    return value if isinstance(value, dict) else {}


def parts(output: str) -> list[str]:
    """The URLs of the parts of the run the manifest under `output` names: what a reader reads."""
    named = manifest(output).get("parts", [])
    base = output.rstrip("/")
    return [f"{base}/{name}" for name in named] if isinstance(named, list) else []
