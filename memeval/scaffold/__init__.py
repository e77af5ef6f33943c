"""``memeval new``: commented starting files for a scenario, a suite, or an engine adapter
package, written from the templates in ``templates/``.

Each scaffold is valid as written (a scenario and a suite validate with ``--strict`` and run;
an engine package installs and passes ``memeval check-engine``), so a user edits from
something that works. Nothing is ever overwritten: a file or folder that exists is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
from importlib import resources

import jinja2

from memeval.errors import UsageError

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
KINDS = ("scenario", "suite", "engine")
# Where an editor's YAML support finds the schemas: the installed package's own copies.
SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec", "schemas")


def scaffold(kind: str, name: str, folder: str = ".") -> list[str]:
    """Write the ``kind`` scaffold called ``name`` under ``folder``; the paths written.

    Raises:
        UsageError: an unknown kind, a name that is not an id (a letter, then letters, digits,
            ``_`` or ``-``), or a target that exists.
    """
    if kind not in KINDS:
        raise UsageError(f"memeval new: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    if not NAME.fullmatch(name):
        raise UsageError(f"memeval new {kind} {name!r}: a name starts with a letter and holds letters, digits, "
                         "'_' and '-' only (at most 64)")
    if kind == "scenario":
        files = {f"{name}.yaml": _render("scenario.yaml.j2", name)}
    elif kind == "suite":
        files = {os.path.join(name, "suite.yaml"): _render("suite.yaml.j2", name),
                 os.path.join(name, "scenarios", "first.yaml"): _render("scenario.yaml.j2", "first")}
    else:
        files = _engine_files(name)
    return _write(folder, files)


def _engine_files(name: str) -> dict[str, str]:
    """The adapter package: pyproject with its entry point, the module, its conformance tests."""
    module = "memeval_" + name.replace("-", "_").lower()
    top = f"memeval-{name}"
    return {os.path.join(top, "pyproject.toml"): _render("engine/pyproject.toml.j2", name, module),
            os.path.join(top, "README.md"): _render("engine/README.md.j2", name, module),
            os.path.join(top, "src", module, "__init__.py"): _render("engine/adapter.py.j2", name, module),
            os.path.join(top, "tests", "test_conformance.py"): _render("engine/test_conformance.py.j2", name, module)}


def _render(template: str, name: str, module: str = "") -> str:
    env = jinja2.Environment(loader=jinja2.FunctionLoader(_source), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    words = re.split(r"[-_]", name)
    return env.get_template(template).render(
        name=name, module=module, dist=f"memeval-{name}", cls="".join(w[:1].upper() + w[1:] for w in words) + "Engine",
        code=int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) % 9000 + 1000,  # a booking number of its own
        schema=SCHEMAS)


def _source(template: str) -> str:
    return resources.files("memeval.scaffold").joinpath("templates", template).read_text(encoding="utf-8")


def _write(folder: str, files: dict[str, str]) -> list[str]:
    """Write every file, or none when the file or folder a scaffold starts with exists."""
    for top in dict.fromkeys(path.split(os.sep)[0] for path in files):
        if os.path.lexists(os.path.join(folder, top)):
            raise UsageError(f"memeval new: {os.path.join(folder, top)} exists; choose another name or --dir")
    written = []
    for path, text in files.items():
        full = os.path.join(folder, path)
        os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
        with open(full, "x", encoding="utf-8") as fh:
            fh.write(text)
        written.append(full)
    return written
