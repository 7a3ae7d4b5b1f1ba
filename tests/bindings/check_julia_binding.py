#!/usr/bin/env python3
"""Checks the Julia binding against the C headers without running Julia.

    check_julia_binding.py REPO_ROOT [--probe EXE | --probe-output FILE]

A ccall with the wrong signature is not caught by Julia until it corrupts
memory, and Julia is not available everywhere the project is tested, so this
reads bindings/julia/DTrain/src/**/*.jl and checks:
  - every ccall is `ccall(_sym(:dt_xxx), Ret, (Types...,), args...)` naming a
    DT_API function, with as many argument types (and arguments) as the C
    prototype has parameters, each type compatible with the C one, and a
    compatible return type;
  - every member of the headers' enums is mirrored with the same value;
  - with a probe (julia_layout_probe, compiled against the real headers): the
    structs mirrored by hand have the C sizes and field offsets, and the
    DT_*/kDL* constants the C values;
  - the examples (bindings/julia/DTrain/examples/*.jl) import, by
    `using DTrain: name, ...`, only names the module exports, and call the
    library only through them (no ccall of their own).
Prints every problem and exits 1, or a summary and exits 0.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capi_headers  # noqa: E402

JULIA_SRC = Path("bindings/julia/DTrain/src")
JULIA_EXAMPLES = Path("bindings/julia/DTrain/examples")

# C struct -> the Julia struct that mirrors it.
STRUCTS = {"DLDevice": "DLDevice", "DLDataType": "DLDataType", "DLTensor": "DLTensor",
           "dt_comm_options": "CommOptions", "dt_optimizer_options": "OptimizerOptions",
           "dt_optimizer_step_info": "OptimizerStepInfo", "dt_ddp_options": "DDPOptions",
           "dt_zero_options": "ZeroOptions", "dt_zero_memory": "ZeroMemory", "dt_p2p_op": "P2POpC",
           "dt_pipeline_schedule_options": "PipelineScheduleOptions", "dt_pipeline_action": "RawPipelineAction",
           "dt_moe_options": "MoeOptions", "dt_pipeline_options": "PipelineOptions",
           "dt_pipeline_step_info": "RawPipelineStepInfo", "dt_plan_model": "PlanModel",
           "dt_plan_cluster": "PlanCluster", "dt_plan_options": "PlanOptions", "dt_plan_config": "PlanConfig",
           "dt_plan_estimate": "PlanEstimate", "dt_plan_summary": "PlanSummary",
           "dt_plan_rejection": "RawPlanRejection", "dt_op_stats": "OpStats"}

# Canonical scalar kinds, shared by both languages.
C_SCALARS = {"int": "i32", "signed": "i32", "signed int": "i32", "unsigned": "u32", "unsigned int": "u32",
             "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64", "size_t": "u64",
             "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16", "char": "char",
             "float": "f32", "double": "f64", "void": "void"}
JULIA_SCALARS = {"Cint": "i32", "Int32": "i32", "Cuint": "u32", "UInt32": "u32", "Int64": "i64",
                 "Clonglong": "i64", "UInt64": "u64", "Csize_t": "u64", "Culonglong": "u64",
                 "Int8": "i8", "Cchar": "i8", "UInt8": "u8", "Cuchar": "u8", "Int16": "i16",
                 "UInt16": "u16", "Float32": "f32", "Cfloat": "f32", "Float64": "f64",
                 "Cdouble": "f64", "Cvoid": "void", "Nothing": "void"}
SIZES = {"i8": 1, "u8": 1, "i16": 2, "u16": 2, "i32": 4, "u32": 4, "f32": 4, "i64": 8, "u64": 8, "f64": 8}
POINTER_SIZE = 8


class Problems(list):
    def add(self, where, what):
        self.append(f"{where}: {what}")


# ---- C side ---------------------------------------------------------------

def c_kind(ctype, enum_names, fn_typedefs):
    """A C type as a canonical kind: "i32", "ptr(void)", "struct DLTensor", ..."""
    if "(*)" in ctype:
        return "ptr(void)"
    text = re.sub(r"\b(const|volatile|struct|enum)\b", " ", ctype)
    depth = text.count("*")
    base = re.sub(r"\s+", " ", text.replace("*", " ")).strip()
    if base in C_SCALARS:
        kind = C_SCALARS[base]
    elif base in enum_names:
        kind = "i32"
    elif base in fn_typedefs:
        kind = "ptr(void)"
    elif base in STRUCTS:
        kind = f"struct {base}"
    elif depth > 0:
        kind = "void"  # an opaque handle (dt_comm, dt_request): Julia sees Ptr{Cvoid}
    else:
        raise ValueError(f"unknown C type {ctype!r}")
    for _ in range(depth):
        kind = f"ptr({kind})"
    return kind


def fn_typedefs(root):
    names = set()
    for path in capi_headers.header_paths(root):
        names.update(re.findall(r"typedef[^;]*\(\s*\*\s*(\w+)\s*\)", capi_headers.strip_c(path.read_text())))
    return names


# ---- Julia side -----------------------------------------------------------

def strip_julia_comments(text):
    """Removes # comments (the binding has no '#' inside strings in ccalls) and #= =# blocks."""
    text = re.sub(r"#=.*?=#", " ", text, flags=re.S)
    return re.sub(r"#[^\n]*", "", text)


def julia_sources(root):
    return sorted((Path(root) / JULIA_SRC).glob("**/*.jl"))


def julia_kind(jtype):
    jtype = jtype.strip()
    m = re.fullmatch(r"(?:Ptr|Ref)\{(.*)\}", jtype)
    if m:
        return f"ptr({julia_kind(m[1])})"
    if jtype == "Cstring":
        return "ptr(char)"
    if jtype in JULIA_SCALARS:
        return JULIA_SCALARS[jtype]
    for c_name, j_name in STRUCTS.items():
        if jtype == j_name:
            return f"struct {c_name}"
    raise ValueError(f"unknown Julia type {jtype!r}")


def compatible(c, j):
    """`char` is a byte of either signedness; everything else must match exactly."""
    if c.startswith("ptr(") and j.startswith("ptr("):
        return compatible(c[4:-1], j[4:-1])
    if c == "char":
        return j in ("char", "u8", "i8")
    return c == j


def balanced(text, start):
    """The index just past the parenthesis that closes the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced parentheses")


def ccalls(path):
    """(line, [arguments of ccall]) for every ccall in a Julia file."""
    text = strip_julia_comments(path.read_text())
    for m in re.finditer(r"\bccall\s*\(", text):
        open_at = m.end() - 1
        close_at = balanced(text, open_at)
        yield text.count("\n", 0, m.start()) + 1, capi_headers.split_top_level(text[open_at + 1: close_at - 1])


def tuple_items(text):
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"argument types {text!r} are not a literal tuple")
    items = capi_headers.split_top_level(text[1:-1])
    return [] if items == [""] else [i for i in items if i]  # a trailing comma leaves an empty item


def check_ccalls(root, problems):
    prototypes = {f.name: f for f in capi_headers.functions(root)}
    enum_names = set(capi_headers.enums(root))
    fns = fn_typedefs(root)
    sites, called = 0, set()
    for path in julia_sources(root):
        rel = path.relative_to(root)
        for line, args in ccalls(path):
            where = f"{rel}:{line}"
            sites += 1
            m = re.fullmatch(r"_sym\(\s*:(\w+)\s*\)", args[0]) if args else None
            if not m or len(args) < 3:
                problems.add(where, f"ccall({', '.join(args)[:60]}...) is not ccall(_sym(:dt_xxx), Ret, (Types...,), args...)")
                continue
            name = m[1]
            called.add(name)
            proto = prototypes.get(name)
            if proto is None:
                problems.add(where, f"{name} is not a DT_API function of capi/include/dtrain")
                continue
            try:
                jtypes = tuple_items(args[2])
                values = args[3:]
                if len(jtypes) != len(proto.params):
                    problems.add(where, f"{name} takes {len(proto.params)} arguments in C "
                                        f"({', '.join(proto.params) or 'void'}) but the ccall declares {len(jtypes)}")
                    continue
                if len(values) != len(jtypes):
                    problems.add(where, f"{name}: {len(jtypes)} argument types but {len(values)} arguments")
                for i, (ctype, jtype) in enumerate(zip(proto.params, jtypes), 1):
                    c, j = c_kind(ctype, enum_names, fns), julia_kind(jtype)
                    if not compatible(c, j):
                        problems.add(where, f"{name} argument {i}: C `{ctype}` ({c}) but Julia `{jtype}` ({j})")
                c, j = c_kind(proto.returns, enum_names, fns), julia_kind(args[1])
                if not compatible(c, j):
                    problems.add(where, f"{name} returns C `{proto.returns}` ({c}) but Julia declares `{args[1]}` ({j})")
            except ValueError as err:
                problems.add(where, f"{name}: {err}")
    return sites, called


# ---- enums, constants and layouts -------------------------------------------

def julia_enums(text):
    """{enum name: (base type, {member: value})} from `@enum Name::Base begin ... end` blocks."""
    found = {}
    for m in re.finditer(r"@enum\s+(\w+)::(\w+)\s+begin(.*?)\n\s*end\b", text, re.S):
        members = {}
        for item in m[3].split("\n"):
            item = item.strip()
            if not item:
                continue
            mm = re.fullmatch(r"(\w+)\s*=\s*(-?\d+)", item)
            if not mm:
                raise ValueError(f"@enum {m[1]}: give every member an explicit value ({item!r})")
            members[mm[1]] = int(mm[2])
        found[m[1]] = (m[2], members)
    return found


def julia_constants(text):
    """{name: value} of `const DT_*/kDL* = ...` with an integer value."""
    found = {}
    for m in re.finditer(r"^const\s+((?:DT_|kDL)\w+)\s*=\s*(.+)$", text, re.M):
        expr = m[2].strip()
        if re.fullmatch(r"typemin\((Cint|Int32)\)", expr):
            found[m[1]] = -(2 ** 31)
            continue
        mm = re.fullmatch(r"(?:\w+\()?\s*(-?(?:0x[0-9a-fA-F]+|\d+))\s*\)?", expr)
        if not mm:
            raise ValueError(f"const {m[1]} = {expr}: not an integer this check can read")
        found[m[1]] = int(mm[1], 0)
    return found


def julia_structs(text):
    """{name: [(field, type)]} of the immutable structs."""
    found = {}
    for m in re.finditer(r"^struct\s+(\w+)\s*\n(.*?)^end\b", text, re.S | re.M):
        found[m[1]] = re.findall(r"^\s*(\w+)::(\S+)", m[2], re.M)
    return found


def julia_layout(name, structs, cache):
    """(size, alignment, [(field, offset, size)]) of a Julia isbits struct, laid out as C does."""
    if name in cache:
        return cache[name]
    offset, align, fields = 0, 1, []
    for field, jtype in structs[name]:
        kind = julia_kind(jtype)
        if kind.startswith("ptr("):
            size = a = POINTER_SIZE
        elif kind.startswith("struct "):
            size, a, _ = julia_layout(STRUCTS[kind[7:]], structs, cache)
        else:
            size = a = SIZES[kind]
        offset = (offset + a - 1) // a * a
        fields.append((field, offset, size))
        offset += size
        align = max(align, a)
    cache[name] = ((offset + align - 1) // align * align, align, fields)
    return cache[name]


def _describe(field):
    return "nothing" if field is None else f"{field[0]} at offset {field[1]}, {field[2]} bytes"


def read_probe(text):
    structs, fields, constants = {}, {}, {}
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["struct"]:
            structs[parts[1]] = int(parts[2])
        elif parts[:1] == ["field"]:
            fields.setdefault(parts[1], []).append((parts[2], int(parts[3]), int(parts[4])))
        elif parts[:1] == ["const"]:
            constants[parts[1]] = int(parts[2])
    return structs, fields, constants


def check_values(root, text, probe, problems):
    enums = julia_enums(text)
    constants = julia_constants(text)
    mirrored = {}
    for enum, (base, members) in enums.items():
        if JULIA_SCALARS.get(base) != "i32":
            problems.add("julia", f"@enum {enum}::{base}: C enums are int, use Cint")
        mirrored.update(members)
    checked = 0
    for c_enum, members in capi_headers.enums(root).items():
        for name, value in members.items():
            checked += 1
            if name not in mirrored:
                problems.add("julia", f"{name} ({c_enum} = {value}) is not mirrored by an @enum")
            elif mirrored[name] != value:
                problems.add("julia", f"{name} is {mirrored[name]} in Julia but {value} in C")
    if probe is None:
        return checked, 0
    structs, fields, c_constants = read_probe(probe)
    for name, value in constants.items():
        if name not in c_constants:
            problems.add("julia", f"const {name} is not printed by julia_layout_probe.c, so it goes unchecked")
        elif c_constants[name] != value:
            problems.add("julia", f"const {name} = {value} but C says {c_constants[name]}")
        checked += 1
    j_structs = julia_structs(text)
    cache = {}
    for c_name, j_name in STRUCTS.items():
        if c_name not in structs:
            problems.add("probe", f"julia_layout_probe prints no struct {c_name}")
            continue
        if j_name not in j_structs:
            problems.add("julia", f"no `struct {j_name}` mirroring {c_name}")
            continue
        size, _, j_fields = julia_layout(j_name, j_structs, cache)
        if size != structs[c_name]:
            problems.add("julia", f"struct {j_name} is {size} bytes but {c_name} is {structs[c_name]}")
        c_fields = fields.get(c_name, [])
        for i in range(max(len(j_fields), len(c_fields))):
            j = j_fields[i] if i < len(j_fields) else None
            c = c_fields[i] if i < len(c_fields) else None
            if j != c:
                problems.add("julia", f"struct {j_name} field {i + 1}: Julia has {_describe(j)}, "
                                      f"{c_name} has {_describe(c)}")
    return checked, len(STRUCTS)


def julia_exports(text):
    """The names of the module's `export` statements (continued over lines after a comma)."""
    names = set()
    for m in re.finditer(r"^\s*export\s+((?:[^\n]*,\s*\n)*[^\n]*)", text, flags=re.M):
        names.update(n.strip() for n in m.group(1).split(",") if n.strip())
    return names


def check_examples(root, text, problems):
    """Each example's `using DTrain: ...` names are exported; no ccall. Returns (examples, names)."""
    exported = julia_exports(text)
    examples = sorted((Path(root) / JULIA_EXAMPLES).glob("*.jl"))
    imported = 0
    for path in examples:
        source = strip_julia_comments(path.read_text())
        where = path.relative_to(root)
        uses = re.findall(r"^\s*using\s+DTrain\s*:\s*((?:[^\n]*,\s*\n)*[^\n]*)", source, flags=re.M)
        if not uses:
            problems.add(where, "imports nothing by `using DTrain: name, ...`")
        for names in uses:
            for name in (n.strip() for n in names.split(",")):
                imported += 1
                if name not in exported:
                    problems.add(where, f"imports {name}, which DTrain does not export")
        if re.search(r"\bccall\s*\(", source):
            problems.add(where, "calls ccall itself instead of the binding")
    return len(examples), imported


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--probe", help="julia_layout_probe executable to run")
    parser.add_argument("--probe-output", type=Path, help="what the probe printed")
    args = parser.parse_args(argv[1:])

    if not julia_sources(args.root):
        print(f"no Julia sources under {args.root / JULIA_SRC}")
        return 1
    probe = None
    if args.probe:
        probe = subprocess.run([args.probe], check=True, capture_output=True, text=True).stdout
    elif args.probe_output:
        probe = args.probe_output.read_text()

    problems = Problems()
    text = "\n".join(strip_julia_comments(p.read_text()) for p in julia_sources(args.root))
    sites, called = check_ccalls(args.root, problems)
    examples, imported = check_examples(args.root, text, problems)
    try:
        values, layouts = check_values(args.root, text, probe, problems)
    except ValueError as err:
        problems.add("julia", str(err))
        values = layouts = 0
    if problems:
        for problem in problems:
            print(problem)
        print(f"{len(problems)} problem(s) in the Julia binding")
        return 1
    print(f"julia binding: {sites} ccalls of {len(called)} functions match their C prototypes; "
          f"{values} constants and {layouts} struct layouts match C"
          + ("" if probe is not None else " (layouts not checked: no probe)")
          + f"; {examples} example(s) import {imported} exported names")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
