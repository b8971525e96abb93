"""One audit of many paths, as a value: what `schedlog verify` computes and then only prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from replay.audit.hoststore import cross_checked
from replay.audit.verify import SessionReport, verify_each
from replay.exitstatus import exit_status
from replay.logs.bytesource import Data
from replay.reading import DEFAULT_READING, Reading


@dataclass(frozen=True)
class Audit:
    """The reports of a run, in input order, each Host task store's with its root's cross-check
    (the session logs beside it); iterating it gives the reports."""

    reports: tuple[SessionReport, ...]

    def __iter__(self) -> Iterator[SessionReport]:
        return iter(self.reports)

    def __len__(self) -> int:
        return len(self.reports)

    @property
    def exit_status(self) -> int:
        """What the command exits with (replay.exitstatus.EXIT_ORDER)."""
        return exit_status(r.verdict for r in self.reports)

    def to_json(self) -> list[dict[str, object]]:
        """What `schedlog verify --format json` prints."""
        return [r.to_json() for r in self.reports]


def verify_paths(
    paths: Sequence[str],
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    stdin: Data | None = None,
    progress: Callable[[int], None] | None = None,
) -> Audit:
    """The audit of the logs and Host task stores at `paths` (and first, for `stdin` when given,
    one reported as `<stdin>`): `verify_each`'s reports, the stores cross-checked against the
    logs beside them. `jobs` > 1 verifies in that many worker processes."""
    return Audit(tuple(cross_checked(list(verify_each(paths, reading, jobs, stdin, progress)))))
