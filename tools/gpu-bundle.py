#!/usr/bin/env python3
"""Packs a CUDA build's GPU tests into one file that runs on a GPU machine
lacking the build's dependencies.

    tools/gpu-bundle.py [-b BUILD] [-o BUILD/gpu-bundle.tar.xz]

Asks CTest for the build's `gpu`-labelled tests and packs, under one root:
their programs (dtrun for the launched ones, dtbench for the smoke runs),
libdtrain and every shared library they load that is not the C and C++
runtime (UCX with its transport modules, OpenBLAS, ...), and a manifest of
the tests: command, environment, deadline, working directory, and how each
says it was skipped, with the build's paths made relative to the root.
Tests whose programs live outside the build (the Python binding's) are
left out and listed as such. tools/gpu-check.py unpacks the file and runs
the tests.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

# Loaded from the machine that runs the bundle, never packed: the C and C++
# runtime (a newer one there runs code built here) and the CUDA driver.
SYSTEM = ("linux-vdso", "ld-linux", "libc.so", "libm.so", "libpthread", "libdl.so", "librt.so", "libstdc++",
          "libgcc_s", "libcuda.so")
UCX_MODULES = "/usr/lib/x86_64-linux-gnu/ucx"


def gpu_tests(build):
    listed = subprocess.run(["ctest", "--test-dir", build, "-L", "gpu", "--show-only=json-v1"], check=True,
                            capture_output=True, text=True).stdout
    return json.loads(listed)["tests"]


def programs(command, build):
    """The files of `command` that the build made (the program, and what dtrun launches)."""
    return [part for part in command if os.path.isabs(part) and part.startswith(build) and os.path.isfile(part)]


def shared_libraries(path):
    """The shared libraries `path` loads, as the dynamic loader resolves them here."""
    found = []
    for line in subprocess.run(["ldd", path], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and parts[1].strip().startswith("/"):
            name = parts[0].strip()
            if not name.startswith(SYSTEM):
                found.append(parts[1].split()[0])
    return found


def relative(value, build):
    """`value` with the build directory as {root}/build."""
    if isinstance(value, list):
        return [relative(v, build) for v in value]
    if isinstance(value, str):
        return value.replace(build, "{root}/build")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--build", default="build/ci", help="a configured and built CUDA build directory")
    parser.add_argument("-o", "--output", help="the bundle (default BUILD/gpu-bundle.tar.xz)")
    args = parser.parse_args()
    build = os.path.realpath(args.build)
    output = args.output or os.path.join(build, "gpu-bundle.tar.xz")

    manifest, left_out, files = [], [], set()
    for test in gpu_tests(build):
        command = test.get("command", [])
        mine = programs(command, build)
        if not command or command[0] not in mine:
            left_out.append(test["name"])
            continue
        files.update(mine)
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        manifest.append({
            "name": test["name"],
            "command": relative(command, build),
            "working_directory": relative(properties.get("WORKING_DIRECTORY", build), build),
            "timeout": properties.get("TIMEOUT", 300),
            "environment": relative(properties.get("ENVIRONMENT", []), build),
            "skip_return_code": properties.get("SKIP_RETURN_CODE"),
            "skip_regular_expression": properties.get("SKIP_REGULAR_EXPRESSION", []),
        })
    # dtbench cp --device cuda and the collective tables, for the benchmarks.
    for extra in ("benchmarks/dtbench/dtbench", "tests/cuda/dtrain_cuda_comm_bench", "tools/dtrun/dtrun"):
        if os.path.isfile(os.path.join(build, extra)):
            files.add(os.path.join(build, extra))

    libraries = set()
    for path in files:
        libraries.update(shared_libraries(path))

    with tempfile.TemporaryDirectory() as staging:
        root = os.path.join(staging, "dtrain-gpu")
        for path in sorted(files):
            target = os.path.join(root, "build", os.path.relpath(path, build))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(path, target)
        for test in manifest:
            os.makedirs(test["working_directory"].replace("{root}", root), exist_ok=True)
        os.makedirs(os.path.join(root, "lib"))
        for library in sorted(libraries):
            shutil.copy2(library, os.path.join(root, "lib", os.path.basename(library)))
        if os.path.isdir(UCX_MODULES):
            shutil.copytree(UCX_MODULES, os.path.join(root, "lib", "ucx"),
                            ignore=shutil.ignore_patterns("*.a", "*.la"))
        with open(os.path.join(root, "manifest.json"), "w") as f:
            json.dump({"tests": manifest, "left_out": left_out}, f, indent=1)
        with tarfile.open(output, "w:xz") as tar:
            tar.add(root, arcname="dtrain-gpu")
    print(f"gpu-bundle: {len(manifest)} tests, {len(files)} programs, {len(libraries)} libraries "
          f"-> {output} ({os.path.getsize(output) / 2**20:.1f} MiB)")
    if left_out:
        print(f"gpu-bundle: left out (programs outside the build): {', '.join(left_out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
