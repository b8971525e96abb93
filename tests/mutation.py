"""Near-valid values for schema-against-checks properties: a valid value with up to two edits."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from replay.conform.cases import paths


def mutate(
    draw: Any, value: Any, replacements: st.SearchStrategy[Any], keys: Sequence[str], whole: bool = False
) -> Any:
    """`value` (mutated in place and returned) after zero to two edits somewhere: a value
    replaced (the whole value too, with `whole`), a key deleted, or one of `keys` added. Drawn
    replacements are copied: a drawn value is shared between examples and must never be mutated."""
    for _ in range(draw(st.integers(0, 2))):
        path = draw(st.sampled_from(list(paths(value))))
        if not path:
            value = copy.deepcopy(draw(replacements)) if whole else value
            continue
        parent: Any = value
        for step in path[:-1]:
            parent = parent[step]
        how = draw(st.sampled_from(["replace", "delete", "add"]))
        if how == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(keys))] = copy.deepcopy(draw(replacements))
        else:
            parent[path[-1]] = copy.deepcopy(draw(replacements))
    return value
