"""Validators for the generated schemas, with cross-file references resolved by `$id`."""

from __future__ import annotations

from functools import cache

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from invariant.schemas import documents


@cache
def registry() -> Registry:  # type: ignore[type-arg]
    return Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc))
        for doc in documents().values()  # type: ignore[misc]
    )


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(documents()[name], registry=registry())


def valid(name: str, value: object) -> bool:
    return bool(validator(name).is_valid(value))
