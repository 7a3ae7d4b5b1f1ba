"""Builds the dtrain package and its SWIG module, dtrain._capi, over libdtrain.

Where libdtrain comes from (the first that is set or found wins):
  DTRAIN_PREFIX=<prefix>      an installed tree: <prefix>/include and
                              <prefix>/lib, lib64 or lib/<multiarch>
  DTRAIN_BUILD_DIR=<build>    a CMake build tree: <build>/capi, with the headers
                              of the source tree it was configured from. A
                              relative path is taken from the directory pip
                              was started in ($PWD), as a user means it, then
                              from the source tree's root.
  pkg-config dtrain
SWIG is $SWIG or the `swig` on PATH.

The wheel is self-contained: it carries libdtrain.so.0 beside the module,
which finds it through an $ORIGIN rpath, and the dtrun launcher, which the
`dtrun` command runs. So an installed package needs neither LD_LIBRARY_PATH
nor the tree it was built from. DTRAIN_BUNDLE=0 leaves both out, for a
distribution's package that uses the system's libdtrain.so.0 and dtrun.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _lib_dir(candidates):
    for directory in candidates:
        if (Path(directory) / "libdtrain.so").exists():
            return str(directory)
    return None


def _from_prefix(prefix):
    prefix = Path(prefix)
    lib = _lib_dir([prefix / "lib", prefix / "lib64", *sorted(glob.glob(str(prefix / "lib" / "*-linux-*")))])
    if lib is None:
        raise SystemExit(f"DTRAIN_PREFIX={prefix}: no libdtrain.so in lib/, lib64/ or lib/<multiarch>/")
    return [str(prefix / "include")], lib, prefix / "bin" / "dtrun"


def _resolve_build_dir(build):
    build = Path(build)
    if build.is_absolute():
        return build
    # pip runs this file from the package's folder (or a copy of it); the user
    # wrote the path from the shell's directory, which PWD still names.
    bases = [Path(os.environ["PWD"])] if os.environ.get("PWD") else []
    bases += [HERE.parent.parent, Path.cwd()]
    for base in bases:
        if (base / build).is_dir():
            return (base / build).resolve()
    raise SystemExit(f"DTRAIN_BUILD_DIR={build}: not a directory under any of {[str(b) for b in bases]}")


def _cache_value(cache, name):
    match = re.search(rf"^{name}:[A-Z]+=(.*)$", cache, re.MULTILINE)
    return match.group(1) if match else None


def _from_build_dir(build):
    build = _resolve_build_dir(build)
    cache_file = build / "CMakeCache.txt"
    source = None
    if cache_file.exists():
        source = _cache_value(cache_file.read_text(errors="replace"), "dtrain_SOURCE_DIR")
    # Without a cache, assume this package sits in its source tree.
    source = Path(source) if source else HERE.parent.parent
    lib = _lib_dir([build / "capi"])
    if lib is None:
        raise SystemExit(f"DTRAIN_BUILD_DIR={build}: no capi/libdtrain.so; build the library first")
    return [str(source / "capi" / "include")], lib, build / "tools" / "dtrun" / "dtrun"


def _pkg_config(*args):
    return subprocess.run(["pkg-config", *args, "dtrain"], check=True, capture_output=True,
                          text=True).stdout.strip()


def _from_pkg_config():
    try:
        # includedir too: pkg-config leaves system directories out of --cflags.
        include = [_pkg_config("--variable=includedir")]
        include += [flag[2:] for flag in shlex.split(_pkg_config("--cflags-only-I"))]
        lib = _pkg_config("--variable=libdir")
        prefix = _pkg_config("--variable=prefix")
    except (OSError, subprocess.CalledProcessError):
        return None
    return [os.path.normpath(d) for d in include], os.path.normpath(lib), Path(prefix) / "bin" / "dtrun"


def find_libdtrain():
    """(include_dirs, library_dir, dtrun) of the libdtrain to build against."""
    if os.environ.get("DTRAIN_PREFIX"):
        return _from_prefix(os.environ["DTRAIN_PREFIX"])
    if os.environ.get("DTRAIN_BUILD_DIR"):
        return _from_build_dir(os.environ["DTRAIN_BUILD_DIR"])
    found = _from_pkg_config()
    if found is None:
        raise SystemExit("libdtrain not found: set DTRAIN_PREFIX to its install prefix or "
                         "DTRAIN_BUILD_DIR to a CMake build tree, or make `pkg-config dtrain` work")
    return found


def read_version(include_dirs):
    for directory in include_dirs:
        header = Path(directory) / "dtrain" / "version.h"
        if header.exists():
            text = header.read_text()
            parts = [re.search(rf"#define DT_VERSION_{p} (\d+)", text).group(1)
                     for p in ("MAJOR", "MINOR", "PATCH")]
            return ".".join(parts)
    raise SystemExit(f"dtrain/version.h is not in {include_dirs}")


class BuildSwigExt(build_ext):
    """Runs SWIG on dtrain.i into the build directory, then compiles the wrapper.

    `swig -builtin -interface _capi` makes the compiled extension the whole
    module dtrain._capi; the Python file SWIG also writes is not needed.
    Then puts libdtrain.so.0 and dtrun into the package (see the top).
    """

    def run(self):
        super().run()
        if not BUNDLE:
            return
        package = Path(self.get_ext_fullpath("dtrain._capi")).parent
        # The file the SONAME names, links followed: what the module loads.
        shutil.copy(Path(library_dir) / "libdtrain.so.0", package / "libdtrain.so.0")
        if not dtrun.is_file():
            raise SystemExit(f"dtrun is not at {dtrun}: build the tools (target dtrun) or install them")
        (package / "bin").mkdir(exist_ok=True)
        shutil.copy(dtrun, package / "bin" / "dtrun")

    def build_extension(self, ext):
        swig = os.environ.get("SWIG") or shutil.which("swig") or shutil.which("swig4.0")
        if swig is None:
            raise SystemExit("SWIG 4 is needed to build dtrain._capi (set SWIG or put swig on PATH)")
        temp = Path(self.build_temp).resolve()
        (temp / "swig-proxy").mkdir(parents=True, exist_ok=True)
        wrapper = temp / "dtrain_wrap.c"
        self.spawn([swig, "-python", "-builtin", "-interface", "_capi", f"-I{HERE}",
                    *[f"-I{d}" for d in ext.include_dirs], "-outdir", str(temp / "swig-proxy"),
                    "-o", str(wrapper), str(HERE / "dtrain.i")])
        ext.sources = [str(wrapper)]
        super().build_extension(ext)


include_dirs, library_dir, dtrun = find_libdtrain()
BUNDLE = os.environ.get("DTRAIN_BUNDLE", "1") != "0"

setup(
    version=read_version(include_dirs),
    packages=["dtrain"],
    ext_modules=[
        Extension(
            "dtrain._capi",
            sources=["dtrain.i"],
            include_dirs=include_dirs,
            library_dirs=[library_dir],
            runtime_library_dirs=["$ORIGIN"] if BUNDLE else [],
            libraries=["dtrain"],
        )
    ],
    cmdclass={"build_ext": BuildSwigExt},
)
