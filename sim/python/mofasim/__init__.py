"""mofasim from Python: load a scenario, apply overrides, and run the simulator's commands.

Every result is the plain Python form (dict / list / float / str) of the same JSON document that
`mofasim <command> --json` prints: the extension module `mofasim._core` runs the command in-process
and this file only builds the command line and parses the output, so the module and the CLI cannot
disagree. Bad input raises `ScenarioError`, whose `errors` are the CLI's error lines
(`file:line:col: field.path: message`).

    import mofasim
    s = mofasim.Scenario("scenarios/small.yaml").with_overrides({"parallel.tensor": 2})
    s.simulate()["step_time_s"]
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any, Iterable, Mapping

from . import _core

__all__ = ["Scenario", "ScenarioError", "load", "run_command"]

_LOCATION = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<rule>.*)$")


class ScenarioError(ValueError):
    """Bad input: a scenario field, an override or an option. `errors` holds one line per problem;
    `file`, `line`, `column` and `rule` describe the first (file/line/column are None when the
    problem has no place in a file, e.g. a bad option)."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = list(errors)
        first = _LOCATION.match(errors[0]) if errors else None
        self.file = first.group("file") if first else None
        self.line = int(first.group("line")) if first else None
        self.column = int(first.group("col")) if first else None
        self.rule = first.group("rule") if first else (errors[0] if errors else "")


def _option_words(options: Mapping[str, Any]) -> list[str]:
    """keyword arguments -> CLI options: trials=10 -> --trials 10, e2e=True -> --e2e,
    no_rule=["a", "b"] -> --no-rule a --no-rule b; None and False are left out."""
    words: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                words += [flag, str(item)]
        else:
            words += [flag, str(value)]
    return words


def _override_words(overrides: Any) -> list[str]:
    """{"a.b": 2} or ["a.b=2"] -> ["a.b=2"]; booleans are written as YAML spells them."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, Mapping):
        out = []
        for path, value in overrides.items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            out.append(f"{path}={value}")
        return out
    return [str(o) for o in overrides]


# Exit statuses that are results, not failures: `memory` exits 3 when a stage does not fit (its
# JSON says which, "fits": false).
_RESULT_STATUSES = {"memory": (0, 3)}


def run_command(command: str, args: Iterable[str]) -> str:
    """Runs `mofasim COMMAND ARGS...` in-process and returns its stdout; raises ScenarioError on
    bad input (exit status 2) and RuntimeError on any other failure."""
    status, out, errors = _core.run(command, list(args))
    if status == 2:
        raise ScenarioError(errors)
    if status not in _RESULT_STATUSES.get(command, (0,)):
        raise RuntimeError("\n".join(errors) or f"mofasim {command} exited with status {status}")
    return out


class Scenario:
    """A scenario file, YAML text or dict, plus overrides (applied in order, like --set)."""

    def __init__(self, source: str | os.PathLike | Mapping[str, Any], overrides: Any = None,
                 name: str = "<string>"):
        if isinstance(source, Mapping):
            # JSON is YAML: a dict is written as JSON text and read by the same loader.
            self._path, self._text = None, json.dumps(source)
        elif isinstance(source, os.PathLike) or ("\n" not in source and ": " not in source):
            # A path; a missing file is reported by the loader like on the command line.
            self._path, self._text = os.fspath(source), None
        else:
            self._path, self._text = None, str(source)
        self._name = name
        self._sets = _override_words(overrides)

    def with_overrides(self, overrides: Any) -> "Scenario":
        """A copy with more overrides ({"path": value} or ["path=value", ...]) after these."""
        copy = Scenario.__new__(Scenario)
        copy._path, copy._text, copy._name = self._path, self._text, self._name
        copy._sets = self._sets + _override_words(overrides)
        return copy

    @property
    def overrides(self) -> list[str]:
        return list(self._sets)

    def _run(self, command: str, options: Mapping[str, Any], json_output: bool = True) -> Any:
        words = _option_words(options)
        for s in self._sets:
            words += ["--set", s]
        if json_output:
            words.append("--json")
        if self._path is not None:
            return _parse(run_command(command, [self._path] + words), json_output)
        with tempfile.TemporaryDirectory(prefix="mofasim-") as tmp:
            path = os.path.join(tmp, "scenario.yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(self._text)
            try:
                return _parse(run_command(command, [path] + words), json_output)
            except ScenarioError as e:
                raise ScenarioError([line.replace(path, self._name) for line in e.errors]) from None

    def simulate(self, timeline: bool = False, **options: Any) -> dict:
        """`mofasim simulate --json`; with timeline=True the result also holds "timeline": the
        step's spans as Chrome/Perfetto trace events (what --trace writes)."""
        if not timeline:
            return self._run("simulate", options)
        with tempfile.TemporaryDirectory(prefix="mofasim-") as tmp:
            trace = os.path.join(tmp, "trace.json")
            result = self._run("simulate", dict(options, trace=trace))
            with open(trace, encoding="utf-8") as f:
                doc = json.load(f)
        result["timeline"] = doc["traceEvents"] if isinstance(doc, dict) else doc
        return result

    def timeline(self, **options: Any) -> list:
        """The simulated step's spans (Chrome/Perfetto trace events)."""
        return self.simulate(timeline=True, **options)["timeline"]

    def memory(self, **options: Any) -> dict:
        """`mofasim memory --json`."""
        return self._run("memory", options)

    def ettr(self, **options: Any) -> dict:
        """`mofasim ettr --json` (quiet); options as on the command line (trials=, seed=, step_time=, ...)."""
        return self._run("ettr", dict({"quiet": True}, **options))

    def tune(self, **options: Any) -> dict:
        """`mofasim tune --json` (quiet); options as on the command line (top=, rerank=, e2e=, ...)."""
        return self._run("tune", dict({"quiet": True}, **options))

    def validate(self, **options: Any) -> dict:
        """`mofasim validate --json` (tolerance=, fidelity=)."""
        return self._run("validate", options)


def _parse(out: str, json_output: bool) -> Any:
    return json.loads(out) if json_output else out


def load(source: str | os.PathLike | Mapping[str, Any], overrides: Any = None) -> Scenario:
    """Scenario(source, overrides)."""
    return Scenario(source, overrides)
