"""Reads libdtrain's public C headers: the exported functions and the enums.

Shared by the binding checks. The headers follow the project's conventions
(every export marked DT_API, enums with explicit values), so a small parser
that strips comments and preprocessor lines is enough; it fails loudly on
anything it does not understand rather than guessing.
"""

import re
from dataclasses import dataclass
from pathlib import Path

HEADER_DIR = Path("capi/include/dtrain")


@dataclass(frozen=True)
class Function:
    name: str
    returns: str          # the C return type, e.g. "dt_status" or "const char *"
    params: tuple         # the C parameter types, names removed
    header: str


def strip_c(text):
    """Removes comments and preprocessor lines (with their continuations)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def header_paths(root):
    return sorted((Path(root) / HEADER_DIR).glob("*.h"))


def split_top_level(text, sep=","):
    """Splits on `sep` outside (), [] and {}."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts]


_TYPE_WORDS = {"const", "volatile", "struct", "enum", "unsigned", "signed", "int", "char", "short",
               "long", "float", "double", "void"}


def _param_type(param):
    """`const DLTensor *send` -> `const DLTensor *`; an unnamed parameter is kept whole."""
    if "(" in param:  # a function pointer: its name sits inside the first parentheses
        return re.sub(r"\(\s*\*\s*\w+\s*\)", "(*)", param)
    tokens = re.findall(r"\w+|\*", param)
    words = [t for t in tokens if t != "*"]
    if len(words) >= 2 and tokens[-1] != "*" and words[-1] not in _TYPE_WORDS:
        param = param[: param.rfind(words[-1])]
    return re.sub(r"\s+", " ", param.replace("*", " * ")).strip()


def functions(root):
    """Every function declared with DT_API in capi/include/dtrain/*.h, in header order."""
    found = []
    for path in header_paths(root):
        text = strip_c(path.read_text())
        for match in re.finditer(r"\bDT_API\b", text):
            end = text.find(";", match.end())
            decl = text[match.end(): end]
            m = re.match(r"\s*(?P<ret>.*?)\b(?P<name>dt_\w+)\s*\((?P<params>.*)\)\s*$", decl, re.S)
            if not m:
                raise ValueError(f"{path.name}: cannot read the DT_API declaration {decl.strip()!r}")
            params = split_top_level(m["params"])
            if params == ["void"] or params == [""]:
                params = []
            returns = re.sub(r"\s+", " ", m["ret"].replace("*", " * ")).strip()
            found.append(Function(m["name"], returns, tuple(_param_type(p) for p in params), path.name))
    return found


def enums(root):
    """{enum type name: {member: value}} for every `typedef enum` in the headers."""
    result = {}
    for path in header_paths(root):
        text = strip_c(path.read_text())
        for m in re.finditer(r"typedef\s+enum\s+\w*\s*\{(?P<body>[^}]*)\}\s*(?P<name>\w+)\s*;", text):
            members, value = {}, -1
            for item in split_top_level(m["body"]):
                if not item:
                    continue
                name, _, expr = item.partition("=")
                value = int(expr.strip().rstrip("uU"), 0) if expr.strip() else value + 1
                members[name.strip()] = value
            result[m["name"]] = members
    return result
