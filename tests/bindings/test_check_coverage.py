#!/usr/bin/env python3
"""Self-test of check_coverage.py on synthetic repository trees."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "check_coverage.py"

HEADER = """\
/* A two-function API. DT_API in a comment is not a declaration: dt_commented(void); */
#define DT_API __attribute__((visibility("default")))
DT_API dt_status dt_thing_create(dt_thing **out,
                                 const dt_thing_options *opts);
DT_API const char *dt_thing_name(void);
"""

COMPLETE = {
    "bindings/python/dtrain/thing.py": "_capi.dt_thing_create(x)\n",
    "bindings/python/dtrain/sub/name.py": "_capi.dt_thing_name()\n",
    "bindings/rust/dtrain-sys/src/bindings.rs":
        "extern \"C\" {\n    pub fn dt_thing_create(out: *mut *mut dt_thing) -> dt_status;\n"
        "    pub fn dt_thing_name() -> *const c_char;\n}\n",
    "bindings/rust/dtrain/src/lib.rs": "sys::dt_thing_create(&mut p);\n",
    "bindings/rust/dtrain/src/name/mod.rs": "unsafe { sys::dt_thing_name() }\n",
    "bindings/julia/DTrain/src/thing.jl": "ccall(_sym(:dt_thing_create), Cint, ())\n",
    "bindings/julia/DTrain/src/more/name.jl": "ccall(_sym(:dt_thing_name), Ptr{UInt8}, ())\n",
    "bindings/fortran/src/capi.f90":
        'function dt_thing_create(out) bind(C, name="dt_thing_create")\n'
        'function dt_thing_name() bind(C, name="dt_thing_name")\n',
}


def make_tree(root, files):
    (root / "capi/include/dtrain").mkdir(parents=True)
    (root / "capi/include/dtrain/thing.h").write_text(HEADER)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def run(root):
    result = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


class CoverageCheck(unittest.TestCase):
    def check(self, files):
        with tempfile.TemporaryDirectory() as tmp:
            make_tree(Path(tmp), files)
            return run(Path(tmp))

    def test_complete_bindings_pass(self):
        code, out = self.check(COMPLETE)
        self.assertEqual(code, 0, out)
        self.assertIn("all 2 dt_* functions are bound", out)

    def test_a_python_function_missing_fails_naming_it(self):
        files = dict(COMPLETE)
        files["bindings/python/dtrain/sub/name.py"] = "dt_thing_name()  # not through _capi\n"
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("python: 1 of 2 functions missing", out)
        self.assertIn("dt_thing_name", out)
        self.assertNotIn("rust:", out)
        self.assertNotIn("julia:", out)

    def test_rust_needs_both_crates(self):
        files = dict(COMPLETE)
        files["bindings/rust/dtrain/src/name/mod.rs"] = "// nothing here\n"
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("rust: 1 of 2", out)
        self.assertIn("dt_thing_name: no `dt_thing_name` in bindings/rust/dtrain/src", out)

        files = dict(COMPLETE)
        files["bindings/rust/dtrain-sys/src/bindings.rs"] = "pub fn dt_thing_create();\n"
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("dt_thing_name: no `pub fn dt_thing_name` in bindings/rust/dtrain-sys", out)

    def test_julia_prefix_is_not_a_match(self):
        files = dict(COMPLETE)
        files["bindings/julia/DTrain/src/more/name.jl"] = "ccall(_sym(:dt_thing_name_v2), Cvoid, ())\n"
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("julia: 1 of 2", out)
        self.assertIn("dt_thing_name: no `:dt_thing_name`", out)

    def test_fortran_needs_the_c_name_bound(self):
        files = dict(COMPLETE)
        # A Fortran procedure of the same name but bound to another C symbol.
        files["bindings/fortran/src/capi.f90"] = (
            'function dt_thing_create(out) bind(C, name="dt_thing_create")\n'
            'function dt_thing_name() bind(C, name="dt_thing_name_v2")\n')
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("fortran: 1 of 2", out)
        self.assertIn('dt_thing_name: no `bind(C, name="dt_thing_name")` in bindings/fortran/src', out)

    def test_a_missing_binding_lists_every_function(self):
        files = {k: v for k, v in COMPLETE.items() if not k.startswith("bindings/julia")}
        code, out = self.check(files)
        self.assertEqual(code, 1, out)
        self.assertIn("julia: 2 of 2", out)
        self.assertIn("dt_thing_create: no files at bindings/julia/DTrain/src", out)


if __name__ == "__main__":
    unittest.main()
