"""The package's modules as the installed names see them, and the imports each one makes (read from
the AST, imports inside functions and under ``if TYPE_CHECKING`` included)."""
from __future__ import annotations

import ast
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]   # package -> folder


def _folder_of(package: str) -> pathlib.Path:
    """The repository folder of an installed package name, by the longest package-dir mapping."""
    for mapped in sorted(PACKAGE_DIRS, key=len, reverse=True):
        if package == mapped or package.startswith(mapped + "."):
            rest = package[len(mapped):].lstrip(".")
            return ROOT / PACKAGE_DIRS[mapped] / rest.replace(".", "/")
    raise KeyError(package)


def modules() -> dict[str, pathlib.Path]:
    """Installed module name -> file, for every module of every package pyproject installs."""
    out = {}
    for package in PYPROJECT["tool"]["setuptools"]["packages"]:
        folder = _folder_of(package)
        for path in sorted(folder.glob("*.py")):
            out[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    return out


def _resolve(name: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = name.split(".") if is_package else name.split(".")[:-1]
    base = parts[: len(parts) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: pathlib.Path) -> set[str]:
    """Every module name ``name`` imports: ``from a.b import c`` counts as a.b.c when that is a
    module of the package, else as a.b."""
    known = modules()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, path.stem == "__init__", node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return found
