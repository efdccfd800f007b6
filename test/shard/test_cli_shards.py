"""--shard i/n + --merge, and mpirun, against the single-process run of each batch command:
the outputs must be byte-identical. Run by ctest with MOFASIM_CLI = the built binary,
MOFASIM_SOURCE_DIR = the repository root and MOFASIM_MPIRUN = mpirun (empty without MPI)."""

import json
import os
import subprocess
import tempfile
import unittest

SOURCE = os.environ["MOFASIM_SOURCE_DIR"]
CLI = os.environ["MOFASIM_CLI"]
MPIRUN = os.environ.get("MOFASIM_MPIRUN", "")
SMALL = os.path.join(SOURCE, "scenarios", "small.yaml")
LLAMA = os.path.join(SOURCE, "scenarios", "mofa", "table5-llama2-70b-1024.yaml")
# Measured iterations in vTrain's format (docs/validation-measured.md): five small runs.
MEASURED = (
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
    "data parallelism,pipeline parallelism,iteration time (ms)\n"
    "2,16,8,1024,16,24,1024,1,1,2,372.160408\n"
    "8,32,4,1024,16,24,1024,2,2,2,219.732754\n"
    "4,32,4,1024,16,24,1024,2,2,1,250.0\n"
    "8,64,8,2048,16,24,1024,2,2,2,900.5\n"
    "4,16,4,2048,16,12,1024,4,1,1,310.25\n")


def write_measured(directory):
    path = os.path.join(directory, "measured.csv")
    with open(path, "w", encoding="utf-8") as f:
        f.write(MEASURED)
    return path


def write_table5_measurements(directory):
    """Four Table 5 LLaMA2-70B scenarios with step times near the paper's, for calibrate."""
    path = os.path.join(directory, "table5.csv")
    with open(path, "w", encoding="utf-8") as f:
        f.write("scenario_path,step_time_s\n")
        for name, seconds in (("128", 27.9), ("256", 14.3), ("512", 7.6), ("1024", 4.1)):
            f.write(f"{SOURCE}/scenarios/mofa/table5-llama2-70b-{name}.yaml,{seconds}\n")
    return path


def mofasim(*args, check=True):
    done = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"mofasim {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


def mpirun(ranks, *args):
    env = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1")
    done = subprocess.run([MPIRUN, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), CLI, *args],
                          capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"mpirun mofasim {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


class ShardedRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mofasim-shards-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def shards(self, n, *args, prefix="part"):
        """Runs the n shards of `mofasim ARGS --shard i/n` into files; returns their paths."""
        paths = []
        for i in range(n):
            path = os.path.join(self.dir, f"{prefix}-{i}.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(mofasim(*args, "--shard", f"{i}/{n}").stdout)
            paths.append(path)
        return paths

    def test_ettr_shards_merge_to_the_single_run_text_json_and_csv(self):
        common = ["ettr", SMALL, "--trials", "1000", "--seed", "5", "--step-time", "2"]
        parts = self.shards(3, *common)
        for output in ([], ["--json"]):
            self.assertEqual(mofasim(*common, "--merge", *parts, *output).stdout, mofasim(*common, *output).stdout)
        single_csv, merged_csv = os.path.join(self.dir, "single.csv"), os.path.join(self.dir, "merged.csv")
        mofasim(*common, "--csv", single_csv)
        mofasim(*common, "--merge", *reversed(parts), "--csv", merged_csv)  # any order
        with open(single_csv) as a, open(merged_csv) as b:
            self.assertEqual(a.read(), b.read())

    def test_ettr_more_shards_than_trials_leaves_some_empty(self):
        common = ["ettr", SMALL, "--trials", "3", "--step-time", "2", "--json"]
        self.assertEqual(mofasim(*common, "--merge", *self.shards(5, *common)).stdout, mofasim(*common).stdout)

    def test_ettr_merge_refuses_missing_overlapping_and_foreign_shards(self):
        common = ["ettr", SMALL, "--trials", "100", "--step-time", "2"]
        parts = self.shards(4, *common)
        missing = mofasim(*common, "--merge", parts[0], parts[1], parts[3], check=False)
        self.assertEqual(missing.returncode, 2)
        self.assertEqual(missing.stderr, "mofasim ettr: --merge: trials 50 to 74 are in no shard\n")
        overlap = mofasim(*common, "--merge", *parts, parts[2], check=False)
        self.assertEqual(overlap.returncode, 2)
        self.assertEqual(overlap.stderr, "mofasim ettr: --merge: shards overlap at trial 50\n")
        other_seed = self.shards(1, "ettr", SMALL, "--trials", "100", "--step-time", "2", "--seed", "9", prefix="seed9")
        foreign = mofasim(*common, "--merge", parts[0], other_seed[0], check=False)
        self.assertEqual(foreign.returncode, 2)
        self.assertIn("mofasim ettr: --merge: a shard comes from another run (", foreign.stderr)
        self.assertIn('"seed":9', foreign.stderr)
        other_step = mofasim("ettr", SMALL, "--trials", "100", "--step-time", "3", "--merge", *parts, check=False)
        self.assertEqual(other_step.returncode, 2)
        self.assertTrue(other_step.stderr.startswith(
            'mofasim ettr: --merge: a shard comes from another run ({"n_steps":10000,"scenario":"small","seed":1,"sets":[],'
            '"step_time_s":2.0,"trials":100}'),
            other_step.stderr)

    def test_bad_shard_options_are_usage_errors(self):
        for bad in ("2/2", "1", "a/b", "1/2x", "3/0"):
            with self.subTest(shard=bad):
                done = mofasim("ettr", SMALL, "--shard", bad, check=False)
                self.assertEqual(done.returncode, 2)
                self.assertEqual(done.stderr, f"mofasim ettr: --shard: must be i/n with 0 <= i < n, got '{bad}'\n")
        both = mofasim("ettr", SMALL, "--shard", "0/2", "--merge", "x.json", check=False)
        self.assertEqual((both.returncode, both.stderr),
                         (2, "mofasim ettr: --shard and --merge go in separate runs\n"))
        not_json = os.path.join(self.dir, "not.json")
        with open(not_json, "w") as f:
            f.write("trial,wall_s\n")
        done = mofasim("ettr", SMALL, "--merge", not_json, check=False)
        self.assertEqual((done.returncode, done.stderr),
                         (2, f"mofasim ettr: --merge: {not_json} is not a shard document (JSON from --shard)\n"))

    def test_validate_measured_shards_merge_to_the_single_run(self):
        measured = write_measured(self.dir)
        for predictor in ("simulated", "analytic"):
            with self.subTest(predictor=predictor):
                common = ["validate", "--measured", measured, "--predictor", predictor]
                parts = self.shards(2, *common, prefix=predictor)
                single_csv = os.path.join(self.dir, f"{predictor}-single.csv")
                merged_csv = os.path.join(self.dir, f"{predictor}-merged.csv")
                out_single = mofasim(*common, "--csv", single_csv).stdout
                out_merged = mofasim(*common, "--csv", merged_csv, "--merge", *parts).stdout
                self.assertEqual(out_merged.replace(merged_csv, single_csv), out_single)
                with open(single_csv) as a, open(merged_csv) as b:
                    self.assertEqual(a.read(), b.read())
        analytic = self.shards(2, "validate", "--measured", measured, "--predictor", "analytic", prefix="a2")
        wrong = mofasim("validate", "--measured", measured, "--merge", *analytic, check=False)
        self.assertEqual(wrong.returncode, 2)
        self.assertIn('mofasim validate: --merge: a shard comes from another run ({"mapping":[],"predictor":"analytic"}',
                      wrong.stderr)
        missing = mofasim("validate", "--measured", measured, "--predictor", "analytic", "--merge", analytic[1],
                          check=False)
        self.assertEqual((missing.returncode, missing.stderr),
                         (2, "mofasim validate: --merge: rows 0 to 1 are in no shard\n"))
        # A shard row holds the step and its breakdown; a bare number is not a prediction.
        with open(analytic[1], encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(len(doc["values"][0]["breakdown"]), 10)
        doc["values"] = [v["step_s"] for v in doc["values"]]
        bare = os.path.join(self.dir, "bare.json")
        with open(bare, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        old = mofasim("validate", "--measured", measured, "--predictor", "analytic", "--merge", analytic[0], bare,
                      check=False)
        self.assertEqual((old.returncode, old.stderr),
                         (2, f"mofasim validate: --merge: row {doc['first_row']} is not a step prediction "
                             "(a shard of another mofasim version?)\n"))

    def sweep_outputs(self, prefix, *args):
        """stdout of `mofasim sweep ... -o DIR/PREFIX` (the prefix replaced by OUT) and its CSV and SVG."""
        out = os.path.join(self.dir, prefix)
        text = mofasim(*args, "-o", out).stdout.replace(out, "OUT")
        with open(out + ".csv") as csv, open(out + ".svg") as svg:
            return text, csv.read(), svg.read()

    def test_sweep_shards_merge_to_the_single_run_text_json_csv_and_svg(self):
        # Every point's trials are split; the pairing with the best point is by trial index.
        common = ["sweep", SMALL, "--param", "fault_tolerance.checkpoint.interval_steps=100:500:100", "--trials", "301",
                  "--seed", "3", "--step-time", "2", "-q"]
        parts = self.shards(3, *common)
        with open(parts[0], encoding="utf-8") as f:
            self.assertEqual(len(json.load(f)["points"]), 5)
        for output in ([], ["--json"]):
            with self.subTest(output=output):
                single = self.sweep_outputs("single", *common, *output)
                merged = self.sweep_outputs("merged", *common, *output, "--merge", *reversed(parts))
                self.assertEqual(merged, single)
                self.assertIn("best (shortest analytic end-to-end time)" if not output else '"best_index"', single[0])

    def test_sweep_merge_refuses_missing_and_foreign_shards(self):
        common = ["sweep", SMALL, "--param", "fault_tolerance.checkpoint.interval_steps=100:300:100", "--trials", "100",
                  "--step-time", "2", "-q", "-o", os.path.join(self.dir, "out")]
        parts = self.shards(4, *common)
        missing = mofasim(*common, "--merge", parts[0], parts[1], parts[3], check=False)
        self.assertEqual((missing.returncode, missing.stderr),
                         (2, "mofasim sweep: --merge: trials 50 to 74 are in no shard\n"))
        other = mofasim(*common[:3], "fault_tolerance.checkpoint.interval_steps=100:400:100", *common[4:], "--merge",
                        *parts, check=False)
        self.assertEqual(other.returncode, 2)
        self.assertIn('mofasim sweep: --merge: a shard comes from another run ({"param":', other.stderr)
        seed9 = self.shards(4, *common, "--seed", "9", prefix="seed9")
        foreign = mofasim(*common, "--merge", *parts[:3], seed9[3], check=False)
        self.assertEqual(foreign.returncode, 2)
        self.assertIn('mofasim sweep: --merge: a shard comes from another run ({"param":', foreign.stderr)
        self.assertIn('"seed":9', foreign.stderr)
        ettr = self.shards(2, "ettr", SMALL, "--trials", "100", "--step-time", "2", prefix="ettr")
        wrong_kind = mofasim(*common, "--merge", *ettr, check=False)
        self.assertEqual((wrong_kind.returncode, wrong_kind.stderr),
                         (2, "mofasim sweep: --merge: not a sweep shard document (from sweep --shard)\n"))

    def calibrate_shards(self, n, *args, prefix="calibrate"):
        """Runs the n shards of `mofasim calibrate ARGS --shard i/n --exchange DIR` at once; returns their paths."""
        exchange = os.path.join(self.dir, prefix + "-exchange")
        os.mkdir(exchange)
        paths = [os.path.join(self.dir, f"{prefix}-{i}.json") for i in range(n)]
        running = []
        for i, path in enumerate(paths):
            with open(path, "w", encoding="utf-8") as f:
                running.append(subprocess.Popen([CLI, *args, "--shard", f"{i}/{n}", "--exchange", exchange], stdout=f,
                                                stderr=subprocess.PIPE, text=True))
        for process in running:
            _, err = process.communicate(timeout=120)
            self.assertEqual(process.returncode, 0, err)
        return paths

    def test_calibrate_shards_trade_through_a_folder_and_merge_to_the_single_run(self):
        measurements = write_table5_measurements(self.dir)
        common = ["calibrate", measurements, "--fit", "gemm", "--fit", "attention"]
        parts = self.calibrate_shards(3, *common)
        for output in ([], ["--json"]):
            with self.subTest(output=output):
                single = mofasim(*common, *output).stdout
                self.assertEqual(mofasim(*common, *output, "--merge", *reversed(parts)).stdout, single)
        with open(parts[1], encoding="utf-8") as f:
            shard = json.load(f)
        # Rows 1 of 4 (1*4/3 = 1 to 2*4/3 = 2): one row, every evaluation plus the residual.
        self.assertEqual((shard["first_row"], len(shard["values"])), (1, 1))
        evaluations = json.loads(mofasim(*common, "--json").stdout)["evaluations"]
        self.assertEqual(len(shard["values"][0]), evaluations + 1)

    def test_calibrate_shard_options_and_merge_errors(self):
        measurements = write_table5_measurements(self.dir)
        common = ["calibrate", measurements, "--fit", "gemm"]
        alone = mofasim(*common, "--shard", "0/2", check=False)
        self.assertEqual((alone.returncode, alone.stderr), (2, (
            "mofasim calibrate: --shard: needs --exchange DIR (a folder all the shards share: each evaluation needs "
            "every row's prediction)\n")))
        no_shard = mofasim(*common, "--exchange", self.dir, check=False)
        self.assertEqual((no_shard.returncode, no_shard.stderr),
                         (2, "mofasim calibrate: --exchange: goes with --shard i/n\n"))
        not_folder = mofasim(*common, "--shard", "0/2", "--exchange", measurements, check=False)
        self.assertEqual((not_folder.returncode, not_folder.stderr),
                         (2, f"mofasim calibrate: --exchange: {measurements} is not a folder\n"))
        # Shard 1 never runs: shard 0 waits for it at the first evaluation, then gives up.
        lonely = mofasim(*common, "--shard", "0/2", "--exchange", self.dir, "--exchange-timeout", "0.2", check=False)
        self.assertEqual((lonely.returncode, lonely.stdout, lonely.stderr), (2, "", (
            "mofasim calibrate: --exchange: shard 1/2 wrote nothing for evaluation 1 within 0.2 s (every shard must "
            "run at the same time, with the same --exchange folder)\n")))
        parts = self.calibrate_shards(2, *common)
        missing = mofasim(*common, "--merge", parts[1], check=False)
        self.assertEqual((missing.returncode, missing.stderr),
                         (2, "mofasim calibrate: --merge: rows 0 to 1 are in no shard\n"))
        foreign = mofasim(*common, "--fit", "attention", "--merge", *parts, check=False)
        self.assertEqual(foreign.returncode, 2)
        self.assertIn('mofasim calibrate: --merge: a shard comes from another run ({"evaluations":600,', foreign.stderr)

    def test_tune_shards_merge_to_the_single_run(self):
        common = ["tune", SMALL, "-q", "--threads", "1", "--top", "5"]
        csvs = []
        for i in range(3):
            csvs.append(os.path.join(self.dir, f"tune-{i}.csv"))
            mofasim(*common, "--shard", f"{i}/3", "--csv", csvs[-1])
        single = mofasim(*common, "--json").stdout
        merged = mofasim(*common, "--json", "--merge", *csvs).stdout
        # The CSV holds no pruning counts: compare the ranking, which the CSV merge rebuilds exactly.
        self.assertEqual(json.loads(merged)["top"], json.loads(single)["top"])


@unittest.skipUnless(MPIRUN, "built without MPI (MOFASIM_WITH_MPI off): no mpirun test")
class MpiRuns(unittest.TestCase):
    def test_mpirun_tune_equals_the_single_run(self):
        args = ["tune", SMALL, "-q", "--threads", "1", "--json", "--top", "6"]
        self.assertEqual(mpirun(2, *args), mofasim(*args).stdout)

    def test_mpirun_tune_text_with_e2e_equals_the_single_run(self):
        args = ["tune", SMALL, "-q", "--threads", "1", "--e2e", "--rerank", "2"]
        self.assertEqual(mpirun(2, *args), mofasim(*args).stdout)

    def test_mpirun_ettr_equals_the_single_run(self):
        args = ["ettr", LLAMA, "--trials", "500", "--step-time", "10", "--threads", "1", "--json"]
        self.assertEqual(mpirun(2, *args), mofasim(*args).stdout)

    def test_mpirun_sweep_equals_the_single_run(self):
        with tempfile.TemporaryDirectory(prefix="mofasim-mpi-") as tmp:
            args = ["sweep", LLAMA, "--param", "fault_tolerance.checkpoint.interval_steps=50:250:50", "--trials", "200",
                    "--step-time", "10", "--threads", "1", "-q"]
            outputs = []
            for name, run in (("single", lambda a: mofasim(*a).stdout), ("mpi", lambda a: mpirun(2, *a))):
                out = os.path.join(tmp, name)
                text = run([*args, "-o", out]).replace(out, "OUT")
                with open(out + ".csv") as csv, open(out + ".svg") as svg:
                    outputs.append((text, csv.read(), svg.read()))
            self.assertEqual(outputs[1], outputs[0])

    def test_mpirun_validate_measured_equals_the_single_run(self):
        with tempfile.TemporaryDirectory(prefix="mofasim-mpi-") as tmp:
            args = ["validate", "--measured", write_measured(tmp)]
            self.assertEqual(mpirun(3, *args), mofasim(*args).stdout)

    def test_mpirun_calibrate_equals_the_single_run(self):
        with tempfile.TemporaryDirectory(prefix="mofasim-mpi-") as tmp:
            measurements = write_table5_measurements(tmp)
            args = ["calibrate", measurements, "--fit", "gemm", "--fit", "attention", "--json"]
            single = mofasim(*args).stdout
            self.assertEqual(len(json.loads(single)["residuals"]), 4)
            for ranks in (2, 3):
                self.assertEqual(mpirun(ranks, *args), single, ranks)


if __name__ == "__main__":
    unittest.main()
