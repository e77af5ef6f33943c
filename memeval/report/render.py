"""Render reports from a run record with Jinja templates (StrictUndefined; HTML autoescaped,
since pack text is untrusted input). ``templates`` may point at a user's own folder.

Compiling the templates costs more than rendering them, so it is done once: an environment is
built once per folder in a process, and the packaged templates compiled are kept between
processes in Jinja's bytecode cache (a folder of the user's own under the temp dir, owner-only;
one file per template, so it stays small). A cached template is used only while its source is
unchanged (Jinja compares a checksum of it). A ``--templates`` folder is compiled afresh in each
process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from memeval.record import RunRecord
from memeval.report.html_view import build_html_view
from memeval.report.view import build_view


class _KeptBytecode(jinja2.FileSystemBytecodeCache):
    """Jinja's per-user bytecode cache, where a file that cannot be written or read back costs
    only a compile."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # a damaged file (Jinja reads its checksum with pickle, unguarded)
            bucket.reset()


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """The bytecode cache, or None where no private temp folder can be had (Jinja refuses one
    another user owns or others may write to).

    Jinja keys a compiled template by its path and checks its source, but the code also depends
    on the environment's settings (autoescaping, newlines): the file names carry a digest of
    this module's source and Jinja's version, so changing either compiles afresh."""
    try:
        with open(__file__, "rb") as own:
            tag = hashlib.sha256(own.read() + jinja2.__version__.encode()).hexdigest()[:16]
        return _KeptBytecode(pattern=f"__memeval_report_{tag}_%s.cache")
    except (OSError, RuntimeError):
        return None


def environment(templates: str | None = None) -> jinja2.Environment:
    """The Jinja environment: a user folder first (if given), then the packaged templates. One
    per folder in a process (Jinja checks a template's file for changes before reusing it)."""
    return _environment(os.path.abspath(templates) if templates else None)


@functools.lru_cache(maxsize=16)
def _environment(templates: str | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = [jinja2.PackageLoader("memeval.report", "templates")]
    if templates:
        loaders.insert(0, jinja2.FileSystemLoader(templates))
    # Sandboxed: a --templates folder is not trusted to reach Python; FileSystemLoader keeps its
    # includes inside that folder.
    return ImmutableSandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=False,
        bytecode_cache=None if templates else _bytecode_cache(),
    )


def render(record: RunRecord, template: str, templates: str | None = None) -> str:
    """Render ``template`` (e.g. ``run.md.j2``) for a run record. Markdown output has its runs of
    blank lines (left by optional sections) folded to one. An HTML template also gets the charts
    and probe views of :func:`memeval.report.html_view.build_html_view`."""
    view = build_view(record)
    if template.endswith(".html.j2"):
        view.update(build_html_view(record))
    text = environment(templates).get_template(template).render(**view)
    return re.sub(r"\n{3,}", "\n\n", text) if template.endswith(".md.j2") else text
