"""Package names loaded from their modules on first use (PEP 562), for the package `__init__`s.

A package that re-exports its modules' names would import every module at its own import; a
caller that needs one name (or the command line's `--help`) would pay for all of them. With
`lazy_exports`, each name is imported from the module that holds it when first read, then kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, Sequence[str]], namespace: dict[str, Any]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names are `homes` (module
    name, relative to the package -> the names it holds); `namespace` is the package's globals."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> object:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home_of})

    return __getattr__, __dir__
