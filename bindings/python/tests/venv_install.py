"""Installs the package as the README says, from a clean clone into a fresh
virtual environment, and runs a 2-rank job with the `dtrun` it installed.

Run by CTest. The clone holds what `git clone` of this checkout would give
(the files git tracks, plus new ones it does not ignore, so that uncommitted
edits are tested too); its build/release is a link to the CMake build tree,
so the README's command runs word for word from the clone's root:

    python3 -m venv venv && . venv/bin/activate
    DTRAIN_BUILD_DIR=build/release pip install ./bindings/python

with one difference: this machine may have no network, so the environment
sees the system site-packages (numpy, setuptools, wheel) and pip is told
--no-build-isolation --no-index where setuptools and wheel are there. pip
still resolves the declared numpy dependency. PYTHONPATH, LD_LIBRARY_PATH
and the launcher variables are cleared: the installed module must be the one
imported, must load the libdtrain.so.0 inside the package, and the job runs
under the installed `dtrun`.
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

# Each rank contributes rank + 1; the sum over 2 ranks is 3 everywhere.
JOB = r"""
import sysconfig
from pathlib import Path
import numpy as np
import dtrain

package = Path(dtrain.__file__).parent
assert str(package).startswith(sysconfig.get_paths()["platlib"]), package
loaded = {line.split()[-1] for line in open("/proc/self/maps") if "libdtrain.so" in line}
assert loaded == {str(package / "libdtrain.so.0")}, f"libdtrain loaded from {loaded}, not the package"
with dtrain.Comm() as comm:
    grads = np.full(8, comm.rank + 1, dtype=np.float32)
    comm.allreduce(grads)
    assert (grads == 3).all(), grads
    print(f"rank {comm.rank} of {comm.size}: allreduce correct, dtrain {dtrain.__version__}")
"""


def run(command, **kwargs):
    print("+", " ".join(map(str, command)), flush=True)
    return subprocess.run(command, check=True, **kwargs)


def clean_clone(source, destination):
    """The files of `source` that a clone would have (all of it where it is no git checkout)."""
    listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
    if listed.returncode != 0:
        shutil.copytree(source, destination, ignore=shutil.ignore_patterns("build*", "__pycache__"))
        return
    for name in filter(None, listed.stdout.decode().split("\0")):
        origin = source / name
        if origin.is_file():  # a deleted but still tracked file is skipped
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, destination / name)


def runpath(elf):
    dynamic = run(["readelf", "-d", elf], capture_output=True, text=True).stdout
    return [entry for line in dynamic.splitlines() if "(RUNPATH)" in line or "(RPATH)" in line
            for entry in line.split("[", 1)[1].rstrip("]").split(":")]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", required=True, type=Path, help="the source tree")
    parser.add_argument("--build-dir", required=True, type=Path, help="the CMake build tree")
    parser.add_argument("--work", required=True, type=Path, help="a folder to make the clone and environment in")
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    clone = args.work / "clone"
    clone.mkdir(parents=True)
    clean_clone(args.source.resolve(), clone)
    (clone / "build").mkdir(exist_ok=True)
    (clone / "build" / "release").symlink_to(args.build_dir.resolve())

    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "DTRAIN_PREFIX", "DTRAIN_BUILD_DIR", "PWD")
           and not k.startswith(("DTRAIN_", "RANK", "WORLD_SIZE", "LOCAL_", "MASTER_"))}
    run([sys.executable, "-m", "venv", "--system-site-packages", "venv"], cwd=clone, env=env)
    offline = subprocess.run(["venv/bin/python", "-c", "import setuptools, wheel"], cwd=clone, env=env,
                             capture_output=True).returncode == 0
    pip_flags = "--no-build-isolation --no-index --disable-pip-version-check" if offline else ""
    run(["bash", "-c", f". venv/bin/activate && DTRAIN_BUILD_DIR=build/release pip install {pip_flags} "
                       "./bindings/python"], cwd=clone, env=env)

    venv = clone / "venv"
    python = venv / "bin" / "python"
    package = Path(run([python, "-c", "import dtrain, os; print(os.path.dirname(dtrain.__file__))"],
                       cwd=args.work, env=env, capture_output=True, text=True).stdout.strip())
    module = next(package.glob("_capi*.so"))
    # $ORIGIN, and nothing of the trees it was built from (Python's own
    # build flags may add the interpreter's library folder).
    rpath = runpath(module)
    assert "$ORIGIN" in rpath, f"{module.name} has rpath {rpath}, without $ORIGIN"
    built_from = (str(args.build_dir.resolve()), str(args.source.resolve()), str(clone))
    assert not [e for e in rpath if e.startswith(built_from)], f"{module.name} has rpath {rpath} into the build"
    for bundled in ("libdtrain.so.0", "bin/dtrun"):
        assert os.access(package / bundled, os.R_OK), f"{bundled} is not in the installed package"

    # From an empty folder (no `dtrain` folder nearby may shadow the
    # installed one), with the environment activated as a user would.
    empty = args.work / "empty"
    empty.mkdir()
    command = f". {venv}/bin/activate && dtrun -n 2 --timeout 60 python -c {shlex.quote(JOB)}"
    print("+", command, flush=True)
    job = subprocess.run(["bash", "-c", command], cwd=empty, env=env, capture_output=True, text=True, timeout=240)
    print(job.stdout, job.stderr, sep="", end="")
    assert job.returncode == 0, f"the job exited {job.returncode}"
    version = run([python, "-c", "import dtrain; print(dtrain.__version__)"], cwd=empty, env=env,
                  capture_output=True, text=True).stdout.strip()
    expected = [f"[{r}] rank {r} of 2: allreduce correct, dtrain {version}" for r in range(2)]
    assert sorted(job.stdout.splitlines()) == expected, job.stdout


if __name__ == "__main__":
    main()
