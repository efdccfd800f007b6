"""`cmake --install` gives a usable tree: the command, the CMake package of the libraries, their
headers, and a Python package that imports and runs outside the build tree."""

import os
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ["MOFASIM_BINARY_DIR"]
CMAKE = os.environ["CMAKE_COMMAND"]
SITE = os.environ["MOFASIM_PYTHON_INSTALL_DIR"]
SMALL = os.path.join(os.environ["MOFASIM_SOURCE_DIR"], "scenarios", "small.yaml")


class Install(unittest.TestCase):
    def test_the_installed_tree_runs(self):
        with tempfile.TemporaryDirectory(prefix="mofasim-install-") as prefix:
            subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], check=True, capture_output=True)
            for part in ("bin/mofasim", "lib/libmofasim_executor.a", "lib/cmake/mofasim/mofasimConfig.cmake",
                         "include/mofasim/sim/scenario/loader.h", "include/mofasim/proto/scenario.pb.h",
                         SITE + "/mofasim/__init__.py"):
                self.assertTrue(os.path.exists(os.path.join(prefix, part)), part)
            code = ("import json, sys, mofasim; r = mofasim.Scenario(sys.argv[1]).memory(); "
                    "print(mofasim.__file__); print(json.dumps(r))")
            env = dict(os.environ, PYTHONPATH=os.path.join(prefix, SITE))
            out = subprocess.run([sys.executable, "-c", code, SMALL], env=env, cwd=prefix, check=True,
                                 capture_output=True, text=True).stdout.splitlines()
            self.assertTrue(out[0].startswith(prefix), out[0])  # the installed package, not the build's
            cli = subprocess.run([os.path.join(prefix, "bin", "mofasim"), "memory", SMALL, "--json"], check=True,
                                 capture_output=True, text=True).stdout
            import json
            self.assertEqual(json.loads(out[1]), json.loads(cli))


if __name__ == "__main__":
    unittest.main()
