#!/usr/bin/env python3
"""Compares the Fortran compiler's view of dtrain_capi's interfaces with the C headers.

    check_prototypes.py REPO_ROOT GFORTRAN

gfortran -fc-prototypes prints the C prototype of every bind(C) interface in a
module as gfortran will call it. Each must be the header's function: the same
number of parameters and, for the return value and each parameter, the same
class at the machine level (pointer, 32- or 64-bit integer, float, double, a
struct by value). Pointed-to types are not compared: the module passes every
pointer as type(c_ptr). This checks what the layout probes cannot: how the
functions are called. Exits 0 when all agree, 1 listing what differs.
"""

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "bindings"))
import capi_headers  # noqa: E402

C_CLASSES = {"int": "i32", "unsigned": "i32", "unsigned int": "i32", "int32_t": "i32", "uint32_t": "i32",
             "int64_t": "i64", "uint64_t": "i64", "size_t": "i64", "float": "f32", "double": "f64",
             "void": "void"}
# What gfortran prints for the iso_c_binding kinds the module uses.
FORTRAN_CLASSES = {"int": "i32", "int32_t": "i32", "long": "i64", "long long": "i64", "int64_t": "i64",
                   "size_t": "i64", "ptrdiff_t": "i64", "intptr_t": "i64", "float": "f32", "double": "f64",
                   "void": "void", "signed char": "i8", "int8_t": "i8", "short": "i16", "int16_t": "i16"}


def c_class(ctype, enums, callbacks):
    if "*" in ctype:  # a pointer, or a function pointer written out
        return "pointer"
    base = re.sub(r"\b(const|volatile|struct|enum)\b", " ", ctype)
    base = re.sub(r"\s+", " ", base).strip()
    if base in enums:
        return "i32"
    if base in callbacks:
        return "pointer"
    return C_CLASSES.get(base, f"struct {base.lower()}")


def fortran_class(ftype):
    """A type in gfortran's prototypes: `void *`, `int (*)()`, `long`, `dldatatype`."""
    if "*" in ftype:
        return "pointer"
    base = re.sub(r"\s+", " ", ftype.replace("const", " ")).strip()
    return FORTRAN_CLASSES.get(base, f"struct {base}")


def fortran_prototypes(gfortran, module):
    """{name: (return class, [parameter classes])} as gfortran calls each interface."""
    with tempfile.TemporaryDirectory() as scratch:  # for the .mod file gfortran writes anyway
        out = subprocess.run([gfortran, "-fc-prototypes", "-fsyntax-only", "-J", scratch, str(module)],
                             capture_output=True, text=True, check=True).stdout
    found = {}
    for m in re.finditer(r"^(?P<ret>[\w ]+?\**)\s*\b(?P<name>dt_\w+)\s*\((?P<params>.*)\);$", out, re.M):
        params = [p for p in capi_headers.split_top_level(m["params"]) if p]
        # Every parameter is named: drop the name (a function pointer keeps its `*`).
        types = [re.sub(r"\s*\b\w+\s*$", "", p) if "(" not in p else "(*)" for p in params]
        found[m["name"]] = (fortran_class(m["ret"]), [fortran_class(t) for t in types])
    return found


def main():
    gfortran = sys.argv[2] if len(sys.argv) > 2 else "gfortran"
    module = ROOT / "bindings" / "fortran" / "src" / "dtrain_capi.f90"
    enums = set(capi_headers.enums(ROOT))
    callbacks = set()
    for path in capi_headers.header_paths(ROOT):
        callbacks.update(re.findall(r"typedef[^;]*\(\s*\*\s*(\w+)\s*\)", capi_headers.strip_c(path.read_text())))
    seen = fortran_prototypes(gfortran, module)
    problems = []
    functions = capi_headers.functions(ROOT)
    for f in functions:
        want = (c_class(f.returns, enums, callbacks), [c_class(p, enums, callbacks) for p in f.params])
        got = seen.get(f.name)
        if got is None:
            problems.append(f"{f.name}: no bind(C) interface in {module.name}")
        elif got != want:
            problems.append(f"{f.name}: C {want[0]} ({', '.join(want[1])}), Fortran {got[0]} ({', '.join(got[1])})")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(functions)} interfaces are called as the C headers declare them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
