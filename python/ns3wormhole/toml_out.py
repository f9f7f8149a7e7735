"""Writing scenario mappings as TOML (what `show` and `convert` print).

Only what scenarios hold: strings, integers, floats, booleans, lists of those or of
inline tables, and nested tables. Top-level scalars come first, then one
``[table]`` per mapping (sub-tables as ``[a.b]``)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

__all__ = ["dumps"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items() if x is not None) + "}"
    raise TypeError(f"cannot write {type(v).__name__} {v!r} as TOML")


def _table(prefix: list[str], data: Mapping[str, Any], out: list[str]) -> None:
    scalars = [(k, v) for k, v in data.items() if v is not None and not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    if prefix and (scalars or not tables):
        out.append(f"[{'.'.join(_key(p) for p in prefix)}]")
    for k, v in scalars:
        out.append(f"{_key(k)} = {_value(v)}")
    if prefix and (scalars or not tables):
        out.append("")
    for k, v in tables:
        _table(prefix + [k], v, out)


def dumps(data: Mapping[str, Any]) -> str:
    """``data`` as TOML text; ``None`` values are left out."""
    out: list[str] = []
    scalars = {k: v for k, v in data.items() if not isinstance(v, Mapping)}
    _table([], scalars, out)
    if scalars:
        out.append("")
    for k, v in data.items():
        if isinstance(v, Mapping):
            _table([k], v, out)
    return "\n".join(out).rstrip("\n") + "\n"
