"""How a run reads and judges its session logs: one value, validated once where it is made."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from invariant.instant import MAX_MS, MIN_MS
from invariant.profiles import Profile, get_profile
from invariant.retention import NO_RETENTION, Retention
from invariant.tools.names import SURFACE_NAMES
from replay.modes import AUTO as AUTO  # (re-exported: the names readers of this module know)
from replay.modes import Mode as Mode

if TYPE_CHECKING:
    from invariant.findings import Finding


@dataclass(frozen=True)
class Selection:
    """Which findings a run reports (replay/cli/selection.py: the options and the configuration that
    make one). It never changes a verdict: it says what is reported of a log, not what it is."""

    select: tuple[str, ...] = ()
    """The selectors of the findings reported (empty: every finding)."""
    ignore: tuple[str, ...] = ()
    """The selectors of the findings not reported."""

    def keeps(self, code: str) -> bool:
        """Whether a finding of `code` is reported."""
        if self.select and not any(matches(code, s) for s in self.select):
            return False
        return not any(matches(code, s) for s in self.ignore)

    def kept(self, findings: Iterable[Finding]) -> tuple[Finding, ...]:
        """The findings reported, in order."""
        return tuple(findings) if self.everything else tuple(f for f in findings if self.keeps(f.code))

    @property
    def everything(self) -> bool:
        return not self.select and not self.ignore


EVERYTHING = Selection()


def matches(code: str, selector: str) -> bool:
    """Whether `selector` names `code`: the code itself, or a prefix of it at a dot."""
    return code == selector or code.startswith(selector + ".")


@dataclass(frozen=True)
class Reading:
    """The options every reading command shares: the protocol profile, the reader mode, a
    seedLength that overrides every header's (None: each header's own), and whether calendar
    decisions follow the intended rule instead of the reference's (`ideal`).

    Made with `Reading.of` from names (the command line's), which resolves and checks them once,
    so that nothing downstream handles a profile name or a mode string again.
    """

    profile: Profile | None = None
    """The protocol profile every session is judged by; None (`auto`): each session's own, as
    its evidence shows (invariant.detect)."""
    mode: Mode = Mode.STRICT
    seed_length: int | None = None
    ideal: bool = False
    now: int | None = None
    """The auditor's instant (epoch ms) for Host tasks overdue then (`verify --now`); never the clock."""
    retention: Retention = NO_RETENTION
    """The deployment's delivery-history bounds, when given (`verify --delivery-history-*`)."""
    tool_surface: str | None = None
    """The tool surface every `schedule_*` call is judged against (`verify --tool-surface`);
    None: the one each session's own calls point to (invariant.tools.judge)."""
    selection: Selection = EVERYTHING
    """The findings reported (`--select`, `--ignore`, `[tool.schedlog]`)."""

    def __post_init__(self) -> None:
        if self.profile is not None and not isinstance(self.profile, Profile):
            raise TypeError(f"profile must be a Profile (use Reading.of for a name), not {self.profile!r}")
        if not isinstance(self.mode, Mode):
            raise TypeError(f"mode must be a Mode (use Reading.of for a name), not {self.mode!r}")
        if self.tool_surface is not None and self.tool_surface not in SURFACE_NAMES:
            raise ValueError(f"unknown tool surface {self.tool_surface!r}; choose one of {list(SURFACE_NAMES)}")
        if self.seed_length is not None and (type(self.seed_length) is not int or self.seed_length < 0):
            raise ValueError(f"seed_length must be a non-negative integer or None, not {self.seed_length!r}")
        if self.now is not None and (type(self.now) is not int or not MIN_MS <= self.now <= MAX_MS):
            raise ValueError(
                f"now must be None or epoch milliseconds within years 0001-9999 ({MIN_MS}..{MAX_MS}), "
                f"not {self.now!r}: the canonical instants a Host store holds go no further"
            )
        if not isinstance(self.retention, Retention):
            raise TypeError(f"retention must be a Retention, not {self.retention!r}")

    @classmethod
    def of(
        cls,
        profile: str | Profile | None = AUTO,
        mode: str | Mode = Mode.STRICT,
        seed_length: int | None = None,
        ideal: bool = False,
    ) -> Reading:
        """Resolve names: an unknown profile or mode raises ValueError naming the choices."""
        try:
            resolved_mode = Mode(mode)
        except ValueError:
            raise ValueError(f"unknown mode {mode!r}; choose one of {[m.value for m in Mode]}") from None
        return cls(None if profile in (None, AUTO) else get_profile(profile), resolved_mode, seed_length, ideal)

    def seed_for(self, header_seed: object) -> object:
        """The seedLength a session is judged with: an override beats the header's (which is
        returned as written, for the fold to check its bounds)."""
        return header_seed if self.seed_length is None else self.seed_length


DEFAULT_READING = Reading()
"""The reading of a run given no options: each session's detected profile, strict mode, each
header's seedLength."""
