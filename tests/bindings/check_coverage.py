#!/usr/bin/env python3
"""Fails unless every public dt_* function is reachable from every binding.

    check_coverage.py [REPO_ROOT]

The functions are those declared with DT_API in capi/include/dtrain/*.h. A
function counts as bound when:
  Python  `_capi.dt_xxx` appears in bindings/python/dtrain/**/*.py;
  Rust    `pub fn dt_xxx` appears in bindings/rust/dtrain-sys/src/bindings.rs
          and the identifier dt_xxx in bindings/rust/dtrain/src/**/*.rs;
  Julia   `:dt_xxx` appears in bindings/julia/DTrain/src/**/*.jl;
  Fortran `bind(C, name="dt_xxx")` appears in bindings/fortran/src/**/*.f90
          (the raw interfaces, generated from the headers by
          bindings/fortran/generate.py; the module dtrain on top covers what
          HPC codes call and leaves the rest to them).
Prints what is missing, per language, and exits 1; exits 0 when nothing is.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import capi_headers  # noqa: E402


def _read(root, pattern):
    """The text of the files under `root` matching the glob, joined; None when there are none."""
    base, _, glob = pattern.partition("|")
    files = sorted((Path(root) / base).glob(glob)) if glob else [Path(root) / base]
    texts = [f.read_text(errors="replace") for f in files if f.is_file()]
    return "\n".join(texts) if texts else None


# For each language: (what to search, regex template with {name}), all of which must match.
LANGUAGES = {
    "python": [("bindings/python/dtrain|**/*.py", r"\b_capi\.{name}\b")],
    "rust": [("bindings/rust/dtrain-sys/src/bindings.rs", r"\bpub\s+fn\s+{name}\b"),
             ("bindings/rust/dtrain/src|**/*.rs", r"\b{name}\b")],
    "julia": [("bindings/julia/DTrain/src|**/*.jl", r":{name}\b")],
    "fortran": [("bindings/fortran/src|**/*.f90", r'\bbind\(C,\s+name="{name}"\)')],
}


def missing_by_language(root):
    """{language: [(function, why)]} for every function a binding lacks."""
    names = [f.name for f in capi_headers.functions(root)]
    if not names:
        raise SystemExit(f"no DT_API functions found under {Path(root) / capi_headers.HEADER_DIR}")
    report = {}
    for language, rules in LANGUAGES.items():
        missing = []
        for pattern, template in rules:
            text = _read(root, pattern)
            where = pattern.replace("|", "/")
            for name in names:
                if text is None:
                    missing.append((name, f"no files at {where}"))
                elif not re.search(template.format(name=re.escape(name)), text):
                    shown = template.format(name=name).replace(r"\b", "").replace(r"\s+", " ").replace("\\", "")
                    missing.append((name, f"no `{shown}` in {where}"))
        if missing:
            report[language] = missing
    return report, names


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    report, names = missing_by_language(root)
    if not report:
        print(f"binding coverage: all {len(names)} dt_* functions are bound in "
              f"{', '.join(LANGUAGES)}")
        return 0
    for language, missing in report.items():
        print(f"{language}: {len({name for name, _ in missing})} of {len(names)} functions missing")
        for name, why in missing:
            print(f"  {name}: {why}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
