"""Render reports from a run record with Jinja templates (StrictUndefined; HTML autoescaped,
since pack text is untrusted input). ``templates`` may point at a user's own folder.

Compiling the templates costs more than rendering them, so it is done once per process: one
environment per folder, which compiles each template once. Nothing compiled is kept between
processes (a bytecode cache would load code from a file, and leave files behind).
"""

from __future__ import annotations

import functools
import os
import re

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from memeval.record import RunRecord
from memeval.report.html_view import build_html_view
from memeval.report.view import build_view


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
