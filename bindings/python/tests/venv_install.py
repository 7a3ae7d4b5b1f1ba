"""Installs the package with pip into a fresh virtual environment and uses it.

Run by CTest. The environment sees the system site-packages (numpy, and
setuptools and wheel where installed, so that nothing is downloaded; without
them pip fetches its build requirements as it does for any user). pip builds
against the CMake build tree named by DTRAIN_BUILD_DIR. PYTHONPATH and
LD_LIBRARY_PATH are cleared: the installed module must be the one imported and
must find libdtrain.so.0 through its rpath.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHECK = r"""
import sysconfig
import numpy as np
import dtrain

assert dtrain.__file__.startswith(sysconfig.get_paths()["platlib"]), dtrain.__file__
with dtrain.Comm() as comm:
    send = np.arange(8, dtype=np.float32)
    recv = np.zeros_like(send)
    comm.allreduce(send, recv)
    assert (recv == send).all(), recv
print("installed dtrain", dtrain.__version__, "from", dtrain.__file__)
"""


def run(command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    subprocess.run(command, check=True, **kwargs)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--package", required=True, type=Path, help="the bindings/python folder")
    parser.add_argument("--build-dir", required=True, type=Path, help="the CMake build tree")
    parser.add_argument("--venv", required=True, type=Path, help="where to make the environment")
    args = parser.parse_args()

    shutil.rmtree(args.venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", "--system-site-packages", args.venv])
    # pip builds in the folder it is given; a copy keeps the source tree clean.
    source = args.venv / "package"
    shutil.copytree(args.package, source,
                    ignore=shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__"))
    python = args.venv / "bin" / "python"

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "DTRAIN_PREFIX")}
    env["DTRAIN_BUILD_DIR"] = str(args.build_dir.resolve())
    offline = subprocess.run([python, "-c", "import setuptools, wheel"], env=env,
                             capture_output=True).returncode == 0
    build_flags = ["--no-build-isolation", "--no-index"] if offline else []
    run([python, "-m", "pip", "install", *build_flags, "--no-deps", "--no-cache-dir",
         "--disable-pip-version-check", source], env=env)
    # From an empty folder: no `dtrain` folder nearby may shadow the installed one.
    empty = args.venv / "empty"
    empty.mkdir()
    run([python, "-c", CHECK], env=env, cwd=empty)


if __name__ == "__main__":
    main()
