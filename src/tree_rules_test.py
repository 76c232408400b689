#!/usr/bin/env python3
"""The rules of the source tree, checked instead of remembered (src/README.md).

1. Formatting: every tracked C++ file is as the repository's .clang-format makes it.
2. Layering: a module includes only itself and the modules below it in MODULE_ORDER, never a peer
   (PEERS), and never another module's private `_internal.h` header.

Run by ctest (`tree_rules_*`); `python3 src/tree_rules_test.py [formatting|layering]` runs one check
by hand and prints every offence with its file and line.
"""
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first: a module may include the modules before it, never one after it. The same order,
# with what each module holds, is the table in src/README.md.
MODULE_ORDER = ["common", "http", "meta", "blob", "objects", "auth", "service", "iceberg", "parquet", "maintenance", "client", "sync", "s3", "catalog", "admin", "console", "cli", "server"]

# Modules at the same level although the order lists one before the other: neither may include
# the other (main.cc, the composition root, is where they meet).
PEERS = [{"cli", "server"}]

# Directories outside src/ whose includes are checked as if they were a module at the top (they may
# include any module's public headers, none of their private ones).
OUTSIDE_MODULES = {"fuzz": "fuzz", "bench": "bench"}

# A private header a module still reaches into, with the reason. Each entry is a debt: remove it
# when the header it names becomes public; a new entry needs a reason as good.
KNOWN_PRIVATE_INCLUDES: dict[tuple[str, str], str] = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z0-9_]+)/([^"]+)"')
CXX_SUFFIXES = (".cc", ".h")


def tracked_cxx_files() -> list[pathlib.Path]:
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "*.cc", "*.h"],
                            check=True, capture_output=True).stdout.decode().split("\0")
    return [ROOT / name for name in listed if name.endswith(CXX_SUFFIXES)]


def module_of(path: pathlib.Path) -> str | None:
    parts = path.relative_to(ROOT).parts
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    return OUTSIDE_MODULES.get(parts[0])


def rank(module: str) -> int:
    return MODULE_ORDER.index(module) if module in MODULE_ORDER else len(MODULE_ORDER)


def layering_offences() -> list[str]:
    offences = []
    for path in tracked_cxx_files():
        module = module_of(path)
        if module is None:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included, header = match.group(1), match.group(2)
            if included not in MODULE_ORDER or included == module:
                continue
            where = f"{path.relative_to(ROOT)}:{number}"
            if {module, included} in PEERS:
                offences.append(f"{where}: {module}/ includes {included}/{header}, a peer it must not know "
                                f"(they meet only in src/main.cc)")
            elif rank(included) > rank(module):
                offences.append(f"{where}: {module}/ includes {included}/{header}, a module above it "
                                f"(order: {' < '.join(MODULE_ORDER)})")
            if header.endswith("_internal.h") and (module, f"{included}/{header}") not in KNOWN_PRIVATE_INCLUDES:
                offences.append(f"{where}: {module}/ includes {included}/{header}, private to {included}/")
    return offences


def stale_known_private_includes() -> list[str]:
    """An exception nobody needs any more must go, so that the list only shrinks."""
    used = set()
    for path in tracked_cxx_files():
        module = module_of(path)
        for line in path.read_text(encoding="utf-8").splitlines():
            match = INCLUDE.match(line)
            if match:
                used.add((module, f"{match.group(1)}/{match.group(2)}"))
    return [f"KNOWN_PRIVATE_INCLUDES lists {module}/ -> {header}, which nothing includes any more"
            for module, header in KNOWN_PRIVATE_INCLUDES if (module, header) not in used]


def formatting_offences() -> list[str]:
    clang_format = shutil.which("clang-format")
    if clang_format is None:
        return ["clang-format is not installed (scripts/install-deps.sh --test installs it)"]
    files = [str(path) for path in tracked_cxx_files()]
    result = subprocess.run([clang_format, "--dry-run", "-Werror", f"--style=file:{ROOT / '.clang-format'}",
                             *files], capture_output=True, text=True)
    if result.returncode == 0:
        return []
    offending = sorted({line.split(":", 1)[0] for line in result.stderr.splitlines() if ": error:" in line})
    return [f"{pathlib.Path(name).relative_to(ROOT)}: not formatted (clang-format -i {name})"
            for name in offending] or [result.stderr.strip()]


def main(argv: list[str]) -> int:
    checks = {"formatting": formatting_offences,
              "layering": lambda: layering_offences() + stale_known_private_includes()}
    chosen = argv[1:] or list(checks)
    failed = False
    for name in chosen:
        offences = checks[name]()
        for offence in offences:
            print(offence)
        print(f"{name}: {'ok' if not offences else f'{len(offences)} offence(s)'}")
        failed |= bool(offences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
