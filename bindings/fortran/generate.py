#!/usr/bin/env python3
"""Generates the raw Fortran interface module `dtrain_capi` from the C headers.

    generate.py            rewrite src/dtrain_capi.f90
    generate.py --check    exit 0 when the committed src/dtrain_capi.f90 is what
                           the headers give now, 1 (with a diff) when it is stale
    generate.py --probes DIR
                           write DIR/layout_probe.c and DIR/layout_probe.f90:
                           two programs printing the size and field offsets of
                           every struct and the value of every constant, as the
                           C compiler and the Fortran compiler see them; their
                           outputs must be identical

The module mirrors every DT_API function of capi/include/dtrain/*.h as a
bind(C) interface, every struct as a bind(C) derived type with the same fields
in the same order, every enum member and numeric or string DT_* macro as a
named constant, and the callback typedefs as abstract interfaces. The mapping
is mechanical, so that it can never drift from the headers:
  int, unsigned, enums            integer(c_int), by value (Fortran has no
                                  unsigned; the bit pattern is the same)
  int64_t, size_t, float, double integer(c_int64_t), integer(c_size_t),
                                  real(c_float), real(c_double), by value
  DLDataType                      type(DLDataType), by value
  T *  (any single pointer)       type(c_ptr), value: pass c_loc(x) or c_null_ptr
  T ** (an output pointer)        type(c_ptr), optional, by reference: the
                                  handle variable itself; absent means NULL
  T *const * (an array of them)   type(c_ptr) :: x(*): an array of c_loc()s
  a callback typedef              type(c_funptr), value: c_funloc(f)
  returns dt_status / const char* integer(c_int) / type(c_ptr)
"""

import argparse
import difflib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "bindings"))
import capi_headers  # noqa: E402

OUTPUT = HERE / "src" / "dtrain_capi.f90"

# DLPack's structs and the constants of its enums that the API uses; dlpack.h
# is not ours to parse, so they are written out here and the layout probe
# checks them against the C compiler.
DLPACK_STRUCTS = [
    ("DLDevice", [("device_type", "int"), ("device_id", "int32_t")]),
    ("DLDataType", [("code", "uint8_t"), ("bits", "uint8_t"), ("lanes", "uint16_t")]),
    ("DLTensor", [("data", "void *"), ("device", "DLDevice"), ("ndim", "int32_t"),
                  ("dtype", "DLDataType"), ("shape", "int64_t *"), ("strides", "int64_t *"),
                  ("byte_offset", "uint64_t")]),
]
DLPACK_CONSTANTS = [("kDLCPU", 1), ("kDLCUDA", 2), ("kDLCUDAHost", 3), ("kDLInt", 0), ("kDLUInt", 1),
                    ("kDLFloat", 2), ("kDLBfloat", 4)]

# C scalar -> Fortran type. Unsigned C types map to the signed kind of the
# same size: Fortran has no unsigned integers.
SCALARS = {"int": "integer(c_int)", "unsigned": "integer(c_int)", "unsigned int": "integer(c_int)",
           "int8_t": "integer(c_int8_t)", "uint8_t": "integer(c_int8_t)",
           "int16_t": "integer(c_int16_t)", "uint16_t": "integer(c_int16_t)",
           "int32_t": "integer(c_int32_t)", "uint32_t": "integer(c_int32_t)",
           "int64_t": "integer(c_int64_t)", "uint64_t": "integer(c_int64_t)",
           "size_t": "integer(c_size_t)", "float": "real(c_float)", "double": "real(c_double)"}

# Macros that are not constants: export markers and the _INIT initialisers.
NOT_CONSTANTS = re.compile(r"^DT_(API|BEGIN_DECLS|END_DECLS)$|_INIT$")
MAX_NAME = 63  # the longest Fortran name


class Api:
    """What the headers declare, in header order."""

    def __init__(self, root):
        self.enums = capi_headers.enums(root)
        self.constants = []   # (name, Fortran type, Fortran value)
        self.structs = list(DLPACK_STRUCTS)
        self.callbacks = []   # (name, returns, [(param name, C type)])
        self.functions = []   # (name, returns, [(param name, C type)])
        for path in capi_headers.header_paths(root):
            raw = path.read_text()
            self._read_defines(path.name, raw)
            text = capi_headers.strip_c(raw)
            self._read_structs(text)
            self._read_callbacks(text)
            self._read_functions(path.name, text)
        self.struct_names = {name for name, _ in self.structs}
        self.callback_names = {name for name, _, _ in self.callbacks}

    def _read_defines(self, header, raw):
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(DT_\w+)\b[ \t]*(.*)$", raw, re.M):
            name, value = m[1], re.sub(r"/\*.*?\*/|//.*", "", m[2]).strip()
            if NOT_CONSTANTS.search(name):
                continue
            if re.fullmatch(r"-?\d+[uU]?", value):
                self.constants.append((name, "integer(c_int)", value.rstrip("uU")))
            elif re.fullmatch(r'"[^"\\]*"', value):
                self.constants.append((name, "character(len=*)", value))
            elif value == "INT_MIN":
                self.constants.append((name, "integer(c_int)", "-huge(0_c_int) - 1_c_int"))
            else:
                raise ValueError(f"{header}: cannot translate #define {name} {value}")

    def _read_structs(self, text):
        for m in re.finditer(r"typedef\s+struct\s+\w*\s*\{(?P<body>[^}]*)\}\s*(?P<name>\w+)\s*;", text):
            fields = []
            for decl in m["body"].split(";"):
                decl = re.sub(r"\s+", " ", decl).strip()
                if decl:
                    fields.append(split_declaration(decl))
            self.structs.append((m["name"], fields))

    def _read_callbacks(self, text):
        for m in re.finditer(r"typedef\s+(?P<ret>[^;(]*?)\(\s*\*\s*(?P<name>\w+)\s*\)\s*\((?P<params>[^;]*)\)\s*;",
                             text):
            self.callbacks.append((m["name"], normal(m["ret"]), parameters(m["params"])))

    def _read_functions(self, header, text):
        for match in re.finditer(r"\bDT_API\b", text):
            decl = text[match.end(): text.find(";", match.end())]
            m = re.match(r"\s*(?P<ret>.*?)\b(?P<name>dt_\w+)\s*\((?P<params>.*)\)\s*$", decl, re.S)
            if not m:
                raise ValueError(f"{header}: cannot read the DT_API declaration {decl.strip()!r}")
            self.functions.append((m["name"], normal(m["ret"]), parameters(m["params"])))


def normal(ctype):
    """A C type with single spaces and `*` as its own word: `const char *`."""
    return re.sub(r"\s+", " ", ctype.replace("*", " * ")).strip()


def split_declaration(decl):
    """`const DLTensor *const *grads` -> ("grads", "const DLTensor * const *")."""
    m = re.fullmatch(r"(?P<type>.*?[\s*])(?P<name>\w+)", decl.strip())
    if not m or not m["type"].strip():
        raise ValueError(f"cannot split {decl!r} into a type and a name")
    return m["name"], normal(m["type"])


def parameters(text):
    params = capi_headers.split_top_level(text)
    if params in (["void"], [""]):
        return []
    return [split_declaration(p) for p in params]


# ---- Fortran -----------------------------------------------------------------

def field_type(api, ctype):
    """The Fortran declaration of a struct field of C type `ctype`."""
    base = re.sub(r"\b(const|struct|enum)\b", "", ctype).strip()
    if "*" in base:
        return "type(c_ptr)"
    if base in SCALARS:
        return SCALARS[base]
    if base in api.enums:
        return "integer(c_int)"
    if base in api.callback_names:
        return "type(c_funptr)"
    if base in dict(api.structs):
        return f"type({base})"
    raise ValueError(f"no Fortran type for the C type {ctype!r}")


def dummy_declaration(api, name, ctype):
    """The Fortran declaration of a function parameter (see the module docstring)."""
    stars = ctype.count("*")
    if stars >= 2:
        if re.search(r"\*\s*const\s*\*", ctype):
            return f"type(c_ptr), intent(in) :: {name}(*)"
        return f"type(c_ptr), optional :: {name}"
    if stars == 1:
        return f"type(c_ptr), value :: {name}"
    return f"{field_type(api, ctype)}, value :: {name}"


def result_type(api, ctype):
    if ctype == "void":
        return None
    if "*" in ctype:
        return "type(c_ptr)"
    return field_type(api, ctype)


def procedure(api, name, returns, params, bind_name):
    """An interface body: a function (or a subroutine for void) over `params`."""
    args = ", ".join(p for p, _ in params)
    rtype = result_type(api, returns)
    kind = "function" if rtype else "subroutine"
    tail = " result(res)" if rtype else ""
    lines = [f"    {kind} {name}({args}) bind(C{bind_name}){tail}", "      import"]
    lines += [f"      {dummy_declaration(api, p, t)}  ! {t}" for p, t in params]
    if rtype:
        lines.append(f"      {rtype} :: res  ! {returns}")
    lines.append(f"    end {kind} {name}")
    return lines


def check_names(api):
    """Fortran names are case-insensitive and at most 63 characters long."""
    seen = {}
    names = ([n for n, _, _ in api.constants] + [n for n, _ in DLPACK_CONSTANTS]
             + [m for e in api.enums.values() for m in e] + [n for n, _ in api.structs]
             + [n for n, _, _ in api.callbacks] + [n for n, _, _ in api.functions])
    for name in names:
        key = name.lower()
        if key in seen:
            raise ValueError(f"{name} and {seen[key]} are one name in Fortran")
        if len(name) > MAX_NAME:
            raise ValueError(f"{name} is longer than Fortran's {MAX_NAME} characters")
        seen[key] = name


def module(api):
    check_names(api)
    out = ["! Generated from the headers in capi/include/dtrain by bindings/fortran/generate.py; do not edit.",
           "!",
           "! The raw C API of libdtrain: every DT_API function as a bind(C) interface, every",
           "! struct as a bind(C) type of the same layout, every constant. See generate.py for",
           "! how C types map to Fortran, and the module dtrain for the high-level layer.",
           "module dtrain_capi",
           "  use, intrinsic :: iso_c_binding",
           "  implicit none",
           "  public",
           "",
           "  ! DLPack device types and dtype codes"]
    out += [f"  integer(c_int), parameter :: {n} = {v}" for n, v in DLPACK_CONSTANTS]
    for enum, members in api.enums.items():
        out += ["", f"  ! {enum}"]
        out += [f"  integer(c_int), parameter :: {m} = {v}" for m, v in members.items()]
    out += ["", "  ! macros"]
    out += [f"  {t}, parameter :: {n} = {v}" for n, t, v in api.constants]
    for name, fields in api.structs:
        out += ["", f"  type, bind(C) :: {name}"]
        out += [f"    {field_type(api, t)} :: {f}  ! {t}" for f, t in fields]
        out.append(f"  end type {name}")
    out += ["", "  abstract interface"]
    for name, returns, params in api.callbacks:
        out += procedure(api, name, returns, params, "")
    out += ["  end interface", "", "  interface"]
    for name, returns, params in api.functions:
        out += procedure(api, name, returns, params, f', name="{name}"')
    out += ["  end interface", "end module dtrain_capi", ""]
    return "\n".join(out)


# ---- layout probes -----------------------------------------------------------

def constant_names(api):
    return ([n for n, _ in DLPACK_CONSTANTS] + [m for e in api.enums.values() for m in e]
            + [n for n, t, _ in api.constants if t.startswith("integer")])


def c_probe(api):
    out = ["/* Generated by bindings/fortran/generate.py --probes: the C compiler's view. */",
           "#include <stddef.h>", "#include <stdio.h>", '#include "dtrain.h"', "",
           "int main(void) {"]
    for name, fields in api.structs:
        out.append(f'  printf("struct {name} %zu\\n", sizeof({name}));')
        for f, _ in fields:
            out.append(f'  printf("field {name} {f} %zu %zu\\n", offsetof({name}, {f}), '
                       f'sizeof((({name} *)0)->{f}));')
    for n in constant_names(api):
        out.append(f'  printf("const {n} %lld\\n", (long long)({n}));')
    out += ["  return 0;", "}", ""]
    return "\n".join(out)


def fortran_probe(api):
    out = ["! Generated by bindings/fortran/generate.py --probes: the Fortran compiler's view.",
           "program layout_probe",
           "  use, intrinsic :: iso_c_binding",
           "  use dtrain_capi",
           "  implicit none"]
    out += [f"  type({name}), target :: v_{name}" for name, _ in api.structs]
    out.append("")
    for name, fields in api.structs:
        out.append(f'  call struct("{name}", c_sizeof(v_{name}))')
        for f, _ in fields:
            out.append(f'  call field("{name}", "{f}", c_loc(v_{name}), c_loc(v_{name}%{f}), '
                       f"c_sizeof(v_{name}%{f}))")
    for n in constant_names(api):
        out.append(f'  call constant("{n}", int({n}, c_int64_t))')
    out += ["",
            "contains",
            "  subroutine struct(name, size)",
            "    character(len=*), intent(in) :: name",
            "    integer(c_size_t), intent(in) :: size",
            "    write (*, '(a, 1x, a, 1x, i0)') 'struct', name, size",
            "  end subroutine struct",
            "  subroutine field(name, member, base, at, size)",
            "    character(len=*), intent(in) :: name, member",
            "    type(c_ptr), intent(in) :: base, at",
            "    integer(c_size_t), intent(in) :: size",
            "    integer(c_intptr_t) :: offset",
            "    offset = transfer(at, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)",
            "    write (*, '(a, 2(1x, a), 2(1x, i0))') 'field', name, member, offset, size",
            "  end subroutine field",
            "  subroutine constant(name, value)",
            "    character(len=*), intent(in) :: name",
            "    integer(c_int64_t), intent(in) :: value",
            "    write (*, '(a, 1x, a, 1x, i0)') 'const', name, value",
            "  end subroutine constant",
            "end program layout_probe", ""]
    return "\n".join(out)


def wrap(text, width=100):
    """Breaks code lines longer than `width` after a comma, Fortran style (`&`):
    free-form source allows 132 characters a line."""
    lines = []
    for line in text.split("\n"):
        code, bang, comment = line.partition("  !")
        indent = " " * (len(code) - len(code.lstrip()) + 4)
        while len(code) > width:
            # Never inside bind(C, name="..."), which readers and checks grep for whole.
            cuts = [m.start() + 1 for m in re.finditer(r", (?!name=)", code) if m.start() < width]
            if not cuts or cuts[-1] <= len(indent):
                break
            lines.append(code[:cuts[-1]] + " &")
            code = indent + code[cuts[-1]:].lstrip()
        lines.append(code + bang + comment)
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--probes", metavar="DIR")
    args = parser.parse_args(argv)
    api = Api(ROOT)
    text = wrap(module(api))
    if args.probes:
        out = Path(args.probes)
        out.mkdir(parents=True, exist_ok=True)
        (out / "layout_probe.c").write_text(c_probe(api))
        (out / "layout_probe.f90").write_text(wrap(fortran_probe(api)))
        return 0
    if args.check:
        committed = OUTPUT.read_text() if OUTPUT.exists() else ""
        if committed == text:
            print(f"{OUTPUT.relative_to(ROOT)} is up to date ({len(api.functions)} functions)")
            return 0
        sys.stdout.writelines(difflib.unified_diff(committed.splitlines(True), text.splitlines(True),
                                                   "committed", "generated"))
        print(f"{OUTPUT.relative_to(ROOT)} is stale: run bindings/fortran/generate.py", file=sys.stderr)
        return 1
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(api.functions)} functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
