"""The mofasim Python module against the mofasim command: same JSON for every shipped scenario,
overrides, dict/YAML-text scenarios, the timeline, and errors as mofasim.ScenarioError.

Run by ctest with PYTHONPATH at build/python, MOFASIM_CLI = the built binary and
MOFASIM_SOURCE_DIR = the repository root."""

import glob
import json
import os
import subprocess
import unittest

import mofasim

SOURCE = os.environ["MOFASIM_SOURCE_DIR"]
CLI = os.environ["MOFASIM_CLI"]
SMALL = os.path.join(SOURCE, "scenarios", "small.yaml")


def shipped_scenarios():
    paths = glob.glob(os.path.join(SOURCE, "scenarios", "*.yaml"))
    paths += glob.glob(os.path.join(SOURCE, "scenarios", "mofa", "*.yaml"))
    return sorted(paths)


def cli_json(*args):
    done = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True)
    # `memory` exits 3 when a stage does not fit; its JSON is the result all the same.
    ok = (0, 3) if args[0] == "memory" else (0,)
    if done.returncode not in ok:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return json.loads(done.stdout)


class SameAsCli(unittest.TestCase):
    def test_at_least_the_known_scenarios_are_shipped(self):
        names = [os.path.basename(p) for p in shipped_scenarios()]
        self.assertIn("small.yaml", names)
        self.assertIn("table5-llama2-70b-1024.yaml", names)
        self.assertGreaterEqual(len(names), 11)

    def test_simulate_and_memory_equal_the_cli_for_every_shipped_scenario(self):
        for path in shipped_scenarios():
            with self.subTest(scenario=os.path.basename(path)):
                s = mofasim.Scenario(path)
                self.assertEqual(s.memory(), cli_json("memory", path))
                self.assertEqual(s.simulate(), cli_json("simulate", path))

    def test_validate_equals_the_cli_for_every_shipped_scenario(self):
        for path in shipped_scenarios():
            with self.subTest(scenario=os.path.basename(path)):
                self.assertEqual(mofasim.Scenario(path).validate(), cli_json("validate", path))

    def test_ettr_equals_the_cli_for_every_shipped_scenario(self):
        for path in shipped_scenarios():
            with self.subTest(scenario=os.path.basename(path)):
                got = mofasim.Scenario(path).ettr(trials=200, seed=7, step_time=10)
                self.assertEqual(got, cli_json("ettr", path, "--trials", "200", "--seed", "7", "--step-time", "10"))
                self.assertEqual(got["monte_carlo"]["trials"], 200)

    def test_tune_equals_the_cli(self):
        got = mofasim.Scenario(SMALL).tune(top=3, rerank=2, threads=1)
        self.assertEqual(got, cli_json("tune", SMALL, "--top", "3", "--rerank", "2", "--threads", "1", "-q"))
        self.assertLessEqual(len(got["top"]), 3)


class Scenarios(unittest.TestCase):
    def test_overrides_change_the_result_as_set_does(self):
        base = mofasim.Scenario(SMALL)
        tp1 = base.with_overrides({"parallelism.tp": 1, "parallelism.dp": 4})
        self.assertEqual(tp1.overrides, ["parallelism.tp=1", "parallelism.dp=4"])
        self.assertEqual(tp1.memory(),
                         cli_json("memory", SMALL, "--set", "parallelism.tp=1", "--set", "parallelism.dp=4"))
        # TP 1 keeps the whole layer on one GPU: twice the parameters per stage of TP 2.
        self.assertEqual(tp1.memory()["stages"][0]["parameters"] > base.memory()["stages"][0]["parameters"], True)

    def test_yaml_text_and_dict_load_like_the_file(self):
        with open(SMALL, encoding="utf-8") as f:
            text = f.read()
        expected = mofasim.Scenario(SMALL).memory()
        self.assertEqual(mofasim.Scenario(text).memory(), expected)
        as_dict = {
            "name": "small",
            "model": {"preset": "tiny-llama"},
            "hardware": {"preset": "h100-sxm"},
            "topology": {"gpus": 8, "gpus_per_node": 8,
                         "intra_node": {"bandwidth": "370 GB/s", "latency": "2 us"},
                         "inter_node": {"bandwidth": "46 GB/s", "latency": "5 us"}},
            "parallelism": {"tp": 2, "cp": 1, "pp": 2, "dp": 2, "micro_batch": 1, "global_batch": 16,
                            "schedule": "1f1b", "sequence_parallel": True},
            "optimizations": {"pp_overlap": {"enabled": True}, "dp_overlap": {"enabled": True},
                              "optimizer": {"placement": "gpu", "distributed": True}, "recompute": "none"},
        }
        got = mofasim.Scenario(as_dict).memory()
        self.assertEqual(got["parameters_total"], expected["parameters_total"])
        self.assertEqual(got["stages"], expected["stages"])

    def test_timeline_holds_the_steps_spans(self):
        result = mofasim.Scenario(SMALL).simulate(timeline=True)
        spans = [e for e in result["timeline"] if e.get("ph") == "X"]
        self.assertGreater(len(spans), 0)
        # No span ends after the step (trace times are in microseconds).
        end_us = max(e["ts"] + e["dur"] for e in spans)
        self.assertLessEqual(end_us, result["step_time_s"] * 1e6 * (1 + 1e-9))
        self.assertEqual({k: v for k, v in result.items() if k != "timeline"}, cli_json("simulate", SMALL))


class Errors(unittest.TestCase):
    def test_a_bad_field_raises_scenario_error_with_file_line_and_rule(self):
        text = "name: bad\nmodel:\n  preset: tiny-llama\nparallelism:\n  tp: -2\n"
        with self.assertRaises(mofasim.ScenarioError) as caught:
            mofasim.Scenario(text, name="bad.yaml").memory()
        e = caught.exception
        self.assertEqual(e.file, "bad.yaml")
        self.assertEqual(e.line, 5)
        self.assertIn("parallelism.tp", e.rule)
        cli = subprocess.run([CLI, "memory", "/dev/stdin"], input=text, capture_output=True, text=True)
        self.assertEqual(cli.returncode, 2)

    def test_errors_equal_the_clis_lines(self):
        with self.assertRaises(mofasim.ScenarioError) as caught:
            mofasim.Scenario(SMALL, {"parallelism.tp": 3}).memory()
        cli = subprocess.run([CLI, "memory", SMALL, "--set", "parallelism.tp=3"], capture_output=True, text=True)
        self.assertEqual(cli.returncode, 2)
        self.assertEqual(caught.exception.errors, cli.stderr.splitlines())

    def test_a_bad_option_and_a_missing_file_raise_scenario_error(self):
        with self.assertRaises(mofasim.ScenarioError) as caught:
            mofasim.Scenario(SMALL).ettr(trials=0)
        cli = subprocess.run([CLI, "ettr", SMALL, "--trials", "0"], capture_output=True, text=True)
        self.assertEqual((cli.returncode, caught.exception.errors), (2, cli.stderr.splitlines()))
        self.assertTrue(caught.exception.errors[0].startswith("mofasim ettr: --trials"), caught.exception.errors)
        self.assertIsNone(caught.exception.line)
        with self.assertRaises(mofasim.ScenarioError) as caught:
            mofasim.Scenario("no/such/file.yaml").simulate()
        cli = subprocess.run([CLI, "simulate", "no/such/file.yaml"], capture_output=True, text=True)
        self.assertEqual((cli.returncode, caught.exception.errors), (2, cli.stderr.splitlines()))

    def test_the_module_keeps_working_after_an_error(self):
        with self.assertRaises(mofasim.ScenarioError):
            mofasim.Scenario(SMALL, ["parallelism.tp=3"]).simulate()
        self.assertEqual(mofasim.Scenario(SMALL).memory(), cli_json("memory", SMALL))


if __name__ == "__main__":
    unittest.main()
