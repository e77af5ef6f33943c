"""The package's one build step pyproject.toml cannot declare: the engine definitions travel with it.

``engines/`` at the top of the checkout is where the shipped definitions live and are edited
(``memeval run --engine engines/x.yaml`` and the README name them there). A wheel holds only the
``memeval`` package, so the build copies them into it as ``memeval/shipped_engines/``, where an
installed memeval finds them (``memeval.spec.engine_def``); an editable install reads the
checkout's folder itself.
"""

from __future__ import annotations

import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithEngines(build_py):
    """build_py, then ``engines/*.yaml`` and ``*.yml`` into ``memeval/shipped_engines/``."""

    def run(self) -> None:
        super().run()
        target = os.path.join(self.build_lib, "memeval", "shipped_engines")
        os.makedirs(target, exist_ok=True)
        for path in sorted(glob.glob(os.path.join(HERE, "engines", "*.y*ml"))):
            shutil.copyfile(path, os.path.join(target, os.path.basename(path)))


setup(cmdclass={"build_py": BuildWithEngines})
