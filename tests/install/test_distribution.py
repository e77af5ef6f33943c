"""The distribution is memeval-harness ('memeval' on the package index is an unrelated project):
every place that names the distribution says so, and no install line sends a user to the other
package. The import name and the command stay memeval."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import distribution

from tests.install.conftest import ROOT

DIST = "memeval-harness"
# `pip install memeval`, `pip install 'memeval[x]'`: the unrelated package on the index
OTHER = re.compile(r"pip install ['\"]?memeval(?![-\w])")


def test_pyproject_and_the_plugin_name_the_distribution() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DIST and project["scripts"] == {"memeval": "memeval.cli:main"}
    assert project["optional-dependencies"]["dev"][0].startswith(f"{DIST}[")  # the extras name it too
    plugin = tomllib.loads((ROOT / "tests" / "plugin_engine" / "pyproject.toml").read_text(encoding="utf-8"))
    assert plugin["project"]["dependencies"] == [DIST]
    assert distribution(DIST).entry_points.select(group="console_scripts")["memeval"].value == "memeval.cli:main"


def test_no_install_line_names_the_other_package() -> None:
    places = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "memeval").rglob("*.py"),
              *(ROOT / "memeval").rglob("*.j2"), *(ROOT / "engines").glob("*.yaml")]
    found = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in places for m in OTHER.finditer(p.read_text(encoding="utf-8"))]
    assert found == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"pip install {DIST}" in readme and "pip install -e ." in readme  # later from the index; now the checkout
