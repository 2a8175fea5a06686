"""Typed, versioned results files: what every benchmark's record shares.

Why: a file under eval/results is read long after it was written (by its report, a target check, the choice of a
default, `--reuse`, the tests), so its shape is stated once, as dataclasses next to the benchmark that writes it,
instead of in the code that happens to index into it. A kind declares `Record` dataclasses for its parts and one
`ResultsFile` for the whole file; this module turns them to and from JSON and checks the version.

JSON keys are the field names unless `key()` names another (`match@5`); `optional()` fields may be absent and are
left out when None; a `rest()` field holds the keys named by the data rather than by the record (a cell per source
beside fixed keys). Reading ignores keys a record does not know; tests/eval/test_results_records.py checks that no
committed file holds one, so a renamed field cannot drop data unnoticed.
"""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Self, Union, get_args, get_origin, get_type_hints


def key(name: str) -> Any:
    """A field stored under another JSON key (`match@5`)."""
    return field(metadata={"key": name})


def optional() -> Any:
    """A field that may be absent (None): left out of the JSON then."""
    return field(default=None)


def rest() -> Any:
    """A dict field holding every key the record's other fields do not name, written back beside them."""
    return field(default_factory=dict, metadata={"rest": True})


def _key(f: Any) -> str:
    """The JSON key of a dataclass field."""
    return f.metadata.get("key", f.name)


class Record:
    """to_json / from_json for dataclasses of JSON values, lists and dicts of them, and nested records. A union of
    several types other than None is only for plain JSON values (`int | float`): it is read as it is."""

    def to_json(self) -> dict[str, Any]:
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("rest"):
                out |= _dump(value)
            elif value is not None or f.default is not None:
                out[_key(f)] = _dump(value)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        hints = get_type_hints(cls)
        known = [f for f in fields(cls) if not f.metadata.get("rest")]  # type: ignore[arg-type]
        required = [_key(f) for f in known if f.default is MISSING and f.default_factory is MISSING]
        if missing := [k for k in required if k not in data]:
            raise ValueError(f"{cls.__name__}: missing {', '.join(missing)}")
        values = {f.name: _load(hints[f.name], data[_key(f)]) for f in known if _key(f) in data}
        named = {_key(f) for f in known}
        for f in fields(cls):  # type: ignore[arg-type]
            if f.metadata.get("rest"):
                values[f.name] = _load(hints[f.name], {k: v for k, v in data.items() if k not in named})
        return cls(**values)


def _dump(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


def _load(hint: Any, value: Any) -> Any:
    origin = get_origin(hint)
    if value is None:
        return None
    if origin in (Union, types.UnionType):
        inner = [a for a in get_args(hint) if a is not type(None)]
        return _load(inner[0], value) if len(inner) == 1 else value
    if origin is list:
        return [_load(get_args(hint)[0], v) for v in value]
    if origin is dict:
        return {k: _load(get_args(hint)[1], v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, Record):
        return hint.from_json(value)
    return value


@dataclass
class ResultsFile(Record):
    """A whole results file: its kind's schema version and the provenance eval.common.provenance.stamp adds.

    Versions: files written before a kind recorded its version have no `schema_version` and read as version 1.
    Reading takes any version up to SCHEMA_VERSION (`upgrade` brings an older one to the current shape, so a record
    always holds the current version) and refuses a newer one with a message; writing puts SCHEMA_VERSION first."""

    SCHEMA_VERSION: ClassVar[int] = 1
    #: What a refusal calls the kind ("retrieval results").
    KIND: ClassVar[str] = "results"
    #: Commit, command and configuration hash of the run (eval.common.provenance; its own version inside).
    provenance: dict[str, Any] | None = field(default=None, kw_only=True)

    @property
    def schema_version(self) -> int:
        return self.SCHEMA_VERSION

    @classmethod
    def upgrade(cls, data: dict[str, Any], version: int) -> dict[str, Any]:
        """`data` of an older `version` in the current shape; a kind whose versions differ overrides it."""
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        version = data.get("schema_version", 1)
        if not isinstance(version, int) or not 1 <= version <= cls.SCHEMA_VERSION:
            raise ValueError(
                f"{cls.KIND} schema {version!r}: this checkout reads versions 1 to "
                f"{cls.SCHEMA_VERSION} (a newer file needs a newer checkout)"
            )
        upgraded = cls.upgrade(data, version)
        return super().from_json({k: v for k, v in upgraded.items() if k != "schema_version"})

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        stamped = {"provenance": data.pop("provenance")} if "provenance" in data else {}
        return {"schema_version": self.SCHEMA_VERSION, **data, **stamped}

    @classmethod
    def read(cls, path: Path) -> Self:
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


@dataclass
class Share(Record):
    """A proportion with its n and 95% Wilson interval (eval.common.stats.share)."""

    value: float
    n: int
    ci95: list[float]
