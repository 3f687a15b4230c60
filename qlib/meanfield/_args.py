"""Argument check shared by the modules that read stored results or tables of cells: a mapping."""
from __future__ import annotations

from collections.abc import Mapping


def mapping(x: object, name: str) -> Mapping:
    """Return ``x`` if it is a mapping, else raise ``TypeError`` naming the parameter ``name``."""
    if not isinstance(x, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(x).__name__}")
    return x
