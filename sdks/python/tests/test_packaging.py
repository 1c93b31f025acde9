"""The package builds as a wheel with its standard backend (setuptools), offline."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_holds_the_package_and_its_typing_marker(tmp_path):
    source = tmp_path / "source"
    # Built from a copy: the backend writes build/ and *.egg-info next to the sources.
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".*"))
    built = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; print(build_meta.build_wheel(sys.argv[1]))",
         str(tmp_path / "dist")],
        cwd=source, capture_output=True, text=True, timeout=120,
    )
    assert built.returncode == 0, built.stderr
    wheel = tmp_path / "dist" / built.stdout.strip().splitlines()[-1]
    assert wheel.name == "evalp-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read("evalp-0.1.0.dist-info/METADATA").decode()
    assert {"evalp/__init__.py", "evalp/client.py", "evalp/agent.py", "evalp/webhooks.py", "evalp/py.typed"} <= names
    assert not any(name.startswith("tests/") for name in names)
    assert "Requires-Dist: httpx" in metadata
    assert "Provides-Extra: agent" in metadata
