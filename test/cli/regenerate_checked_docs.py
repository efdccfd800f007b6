#!/usr/bin/env python3
"""Rewrites the checked blocks of docs/getting-started.md (the ones test/cli/docs_sync_test.cc
compares) with what the current build prints, after an intended change of results.
    python3 test/cli/regenerate_checked_docs.py [BUILD_DIR]     (run from anywhere; default build/)
Review the diff before committing it."""
import pathlib
import shlex
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build"
marker = "<!-- checked: the output of the command below -->"
prompt = "$ ./build/mofasim "
doc = root / "docs" / "getting-started.md"
lines = doc.read_text().split("\n")
out, i = [], 0
while i < len(lines):
    out.append(lines[i])
    if lines[i] == marker and i + 2 < len(lines) and lines[i + 1] == "```" and lines[i + 2].startswith(prompt):
        args = shlex.split(lines[i + 2][len(prompt):])
        run = subprocess.run([str(build / "mofasim"), *args], cwd=root, capture_output=True, text=True)
        out += ["```", lines[i + 2]] + (run.stdout + run.stderr).rstrip("\n").split("\n")
        i += 3
        while i < len(lines) and lines[i] != "```":
            i += 1
        continue
    i += 1
doc.write_text("\n".join(out))
