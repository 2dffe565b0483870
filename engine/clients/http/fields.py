"""Reading a JSON request: the body as an object, and each property checked for its type, with
Manticore's wording (``"limit" property value should be an integer``, ``"table" property missing``).
"""
from __future__ import annotations

import json
from typing import Any


class RequestError(ValueError):
    """The request is malformed; each endpoint answers it in its own Manticore shape."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def load_object(body: bytes, what: str = "request") -> dict[str, Any]:
    """The body as a JSON object."""
    if not body.strip():
        raise RequestError(f"empty {what} body")
    try:
        value = json.loads(body)
    except UnicodeDecodeError:
        raise RequestError("the request body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise RequestError(f"JSON parse error at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise RequestError("JSON parse error: nested too deeply") from None
    if not isinstance(value, dict):
        raise RequestError(f"the {what} must be a JSON object")
    return value


KINDS = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "numeric"),
    "boolean": (lambda v: isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)), "a boolean"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "array": (lambda v: isinstance(v, list), "an array"),
}


def get(obj: dict[str, Any], name: str, kind: str, *, required: bool = False, default: Any = None) -> Any:
    """``obj[name]`` checked to be of ``kind`` (a key of KINDS); missing: ``default`` or an error."""
    if name not in obj or obj[name] is None:
        if required:
            raise RequestError(f'"{name}" property missing')
        return default
    value = obj[name]
    check, words = KINDS[kind]
    if not check(value):
        raise RequestError(f'"{name}" property value should be {words}')
    return value


def table_name(obj: dict[str, Any]) -> str:
    """``table`` (or its older name ``index``): which table a request is about."""
    name = get(obj, "table", "string") if "table" in obj else get(obj, "index", "string")
    if not name:
        raise RequestError('"table" property missing')
    return name
