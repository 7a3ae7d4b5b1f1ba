#!/usr/bin/env python3
"""Self-test of check_julia_binding.py on synthetic trees."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "check_julia_binding.py"

HEADER = """\
typedef struct dt_comm dt_comm;
typedef enum dt_status { DT_OK = 0, DT_ERR_X = -1 } dt_status;
typedef dt_status (*dt_cb_fn)(void *user, int n);
DT_API dt_status dt_comm_rank(const dt_comm *comm, int *out);
DT_API const char *dt_error_last(void);
DT_API void dt_hook(dt_cb_fn fn, void *user, size_t bytes);
"""

JULIA = """\
@enum Status::Cint begin
    DT_OK = 0
    DT_ERR_X = -1
end
const DT_UNDEF = typemin(Cint)  # compared with the probe
struct DLDevice
    device_type::Int32
    device_id::Int32
end
rank(c) = ccall(_sym(:dt_comm_rank), Cint, (Ptr{Cvoid}, Ref{Cint}), c, out)
last() = unsafe_string(ccall(_sym(:dt_error_last), Ptr{UInt8}, ()))
hook(f, u) = ccall(_sym(:dt_hook), Cvoid,
                   (Ptr{Cvoid}, Ptr{Cvoid}, Csize_t,),  # a trailing comma is fine
                   f, u, 4)
"""

PROBE = """\
struct DLDevice 8
field DLDevice device_type 0 4
field DLDevice device_id 4 4
struct DLDataType 4
struct DLTensor 48
struct dt_comm_options 64
const DT_UNDEF -2147483648
"""


def run(julia, header=HEADER, probe=None, example=None):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "capi/include/dtrain").mkdir(parents=True)
        (root / "capi/include/dtrain/api.h").write_text(header)
        (root / "bindings/julia/DTrain/src").mkdir(parents=True)
        (root / "bindings/julia/DTrain/src/api.jl").write_text(julia)
        if example is not None:
            (root / "bindings/julia/DTrain/examples").mkdir(parents=True)
            (root / "bindings/julia/DTrain/examples/train.jl").write_text(example)
        command = [sys.executable, str(SCRIPT), str(root)]
        if probe is not None:
            (root / "probe.txt").write_text(probe)
            command += ["--probe-output", str(root / "probe.txt")]
        result = subprocess.run(command, capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr


class JuliaBindingCheck(unittest.TestCase):
    def test_matching_signatures_pass(self):
        code, out = run(JULIA)
        self.assertEqual(code, 0, out)
        self.assertIn("3 ccalls of 3 functions match", out)

    def test_wrong_argument_count_fails(self):
        code, out = run(JULIA.replace("(Ptr{Cvoid}, Ref{Cint}), c, out)", "(Ptr{Cvoid},), c)"))
        self.assertEqual(code, 1, out)
        self.assertIn("api.jl:10: dt_comm_rank takes 2 arguments in C", out)
        self.assertIn("declares 1", out)

    def test_arguments_must_match_types(self):
        code, out = run(JULIA.replace("f, u, 4)", "f, u)"))
        self.assertEqual(code, 1, out)
        self.assertIn("dt_hook: 3 argument types but 2 arguments", out)

    def test_wrong_types_fail(self):
        code, out = run(JULIA.replace("Ref{Cint}), c, out)", "Ref{Int64}), c, out)"))
        self.assertEqual(code, 1, out)
        self.assertIn("dt_comm_rank argument 2: C `int *` (ptr(i32)) but Julia `Ref{Int64}`", out)
        code, out = run(JULIA.replace("Csize_t,)", "Cint,)"))
        self.assertIn("dt_hook argument 3: C `size_t`", out)
        code, out = run(JULIA.replace("_sym(:dt_error_last), Ptr{UInt8}", "_sym(:dt_error_last), Cint"))
        self.assertIn("dt_error_last returns C `const char *`", out)

    def test_unknown_functions_and_other_ccalls_fail(self):
        code, out = run(JULIA + "x() = ccall(_sym(:dt_gone), Cvoid, ())\ny() = ccall(:strlen, Csize_t, (Cstring,), s)\n")
        self.assertEqual(code, 1, out)
        self.assertIn("dt_gone is not a DT_API function", out)
        self.assertIn("is not ccall(_sym(:dt_xxx)", out)

    def test_enum_values_must_match(self):
        code, out = run(JULIA.replace("DT_ERR_X = -1", "DT_ERR_X = -2"))
        self.assertEqual(code, 1, out)
        self.assertIn("DT_ERR_X is -2 in Julia but -1 in C", out)
        code, out = run(JULIA.replace("    DT_ERR_X = -1\n", ""))
        self.assertIn("DT_ERR_X (dt_status = -1) is not mirrored", out)

    def test_layouts_and_constants_against_the_probe(self):
        code, out = run(JULIA, probe=PROBE)
        self.assertEqual(code, 1, out)  # the synthetic tree mirrors only DLDevice
        self.assertIn("no `struct DLTensor` mirroring DLTensor", out)
        self.assertNotIn("DLDevice", out)
        self.assertNotIn("DT_UNDEF", out)

        code, out = run(JULIA.replace("device_id::Int32", "device_id::Int64"), probe=PROBE)
        self.assertIn("struct DLDevice is 16 bytes but DLDevice is 8", out)
        self.assertIn("field 2: Julia has device_id at offset 8, 8 bytes, DLDevice has device_id at offset 4", out)

        code, out = run(JULIA.replace("typemin(Cint)", "Cint(0)"), probe=PROBE)
        self.assertIn("const DT_UNDEF = 0 but C says -2147483648", out)

    def test_examples_import_only_exported_names(self):
        module = "export rank,\n       last\n" + JULIA
        code, out = run(module, example="using DTrain: rank,\n    last\nrank(c)\n")
        self.assertEqual(code, 0, out)
        self.assertIn("1 example(s) import 2 exported names", out)

        code, out = run(module, example="using DTrain: rank, hook\n")
        self.assertEqual(code, 1, out)
        self.assertIn("examples/train.jl: imports hook, which DTrain does not export", out)

        code, out = run(module, example="using DTrain\nx() = ccall(:strlen, Csize_t, (Cstring,), s)\n")
        self.assertIn("imports nothing by `using DTrain: name, ...`", out)
        self.assertIn("calls ccall itself instead of the binding", out)


if __name__ == "__main__":
    unittest.main()
