"""Unit tests of benchmarks/compare's parsing, checks and aggregation."""
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "..", "..", "benchmarks", "compare")
loader = importlib.machinery.SourceFileLoader("compare", PATH)
spec = importlib.util.spec_from_loader("compare", loader)
compare = importlib.util.module_from_spec(spec)
loader.exec_module(compare)

CX_OUT = """# library: MPICH Version:\t4.0.2
# library: MPICH-CX Version:\t0.1.0
# bench: pingpong
bench,case,x,metric,value,unit
pingpong,latency,8,latency,0.5,us
pingpong,bandwidth,8,bandwidth,100,MB/s
"""


class ParseTest(unittest.TestCase):
    def test_rows_and_library(self):
        lib, rows = compare.parse_output(CX_OUT)
        self.assertEqual(lib[1], "MPICH-CX Version:\t0.1.0")
        self.assertEqual(rows[0], ("pingpong", "latency", 8, "latency", 0.5, "us"))
        self.assertEqual(len(rows), 2)

    def test_no_header_is_an_error(self):
        with self.assertRaises(compare.CompareError):
            compare.parse_output("pingpong,latency,8,latency,0.5,us\n")

    def test_malformed_row_is_an_error(self):
        with self.assertRaises(compare.CompareError):
            compare.parse_output("bench,case,x,metric,value,unit\npingpong,latency,8\n")

    def test_library_check(self):
        lib, _ = compare.parse_output(CX_OUT)
        compare.expected_library_check("cx", lib)
        with self.assertRaises(compare.CompareError):
            compare.expected_library_check("baseline", lib)
        with self.assertRaises(compare.CompareError):
            compare.expected_library_check("cx", ["MPICH Version:\t4.0.2"])
        compare.expected_library_check("ompi", ["Open MPI v4.1.4, package: Debian OpenMPI"])
        with self.assertRaises(compare.CompareError):
            compare.expected_library_check("ompi", ["MPICH Version:\t4.0.2"])

    def test_open_mpi_prefix(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            self.assertFalse(compare.is_open_mpi(d))
            self.assertEqual(compare.mpi_tool(d, "mpicc"), os.path.join(d, "bin", "mpicc"))
            for tool in ("ompi_info", "mpicc.openmpi"):
                path = os.path.join(d, "bin", tool)
                open(path, "w").close()
                os.chmod(path, 0o755)
            self.assertTrue(compare.is_open_mpi(d))
            self.assertEqual(compare.mpi_tool(d, "mpicc"), os.path.join(d, "bin", "mpicc.openmpi"))
            self.assertEqual(compare.mpi_tool(d, "mpiexec"), os.path.join(d, "bin", "mpiexec"))


class AggregateTest(unittest.TestCase):
    def test_median_and_ratio(self):
        key = ("mt_msgrate", "threads=1", 8, "msg_rate")
        samples = {"cx": {key: [5, 1, 3, 100, 4]}, "baseline": {key: [2, 2, 2, 2, 50]}}
        med = compare.aggregate(samples)
        self.assertEqual(med[key], {"cx": 4, "baseline": 2})
        table = compare.markdown_tables(med, ["cx", "baseline"], {("mt_msgrate", "msg_rate"): "msg/s"}, 5,
                                        ref="baseline")
        self.assertIn("| case | x | cx | baseline | cx/baseline |", table)
        self.assertIn("| threads=1 | 8 | 4 | 2 | 2.000 (better) |", table)
        self.assertIn("higher is better", table)

    def test_time_ratio_direction(self):
        self.assertEqual(compare.ratio_text("latency", 2.0, 1.0), "2.000 (worse)")
        self.assertEqual(compare.ratio_text("latency", 0.5, 1.0), "0.500 (better)")
        self.assertEqual(compare.ratio_text("latency", 1.0, 0), "n/a")

    def test_presets_and_custom(self):
        runs = compare.expand(["mt_msgrate", "pingpong:--sizes 8"], quick=True)
        self.assertEqual(runs[0], ("mt_msgrate", ["--threads", "1", "--quick"]))
        self.assertEqual(runs[-1], ("pingpong", ["--sizes", "8", "--quick"]))
        with self.assertRaises(compare.CompareError):
            compare.expand(["nosuch"], quick=False)

    def test_parse_mpi_with_settings(self):
        n, p, env = compare.parse_mpi("cx-lockq=/opt/cx,MPIR_CVAR_CH4_MT_MODEL=lockq,A=1=2")
        self.assertEqual((n, p), ("cx-lockq", "/opt/cx"))
        self.assertEqual(env, {"MPIR_CVAR_CH4_MT_MODEL": "lockq", "A": "1=2"})
        self.assertEqual(compare.parse_mpi("b=/x")[2], {})
        with self.assertRaises(compare.CompareError):
            compare.parse_mpi("/opt/cx")
        with self.assertRaises(compare.CompareError):
            compare.parse_mpi("cx=/opt/cx,NOVALUE")

    def test_plot_sweep(self):
        if not compare.shutil.which("gnuplot"):
            self.skipTest("gnuplot not installed")
        med = {("pingpong", "latency", x, "latency"): {"a": x * 1.0, "b": x * 2.0} for x in (1, 2, 4, 8)}
        with tempfile.TemporaryDirectory() as d:
            made = compare.plot(med, ["a", "b"], {}, d)
            self.assertEqual(made, [os.path.join(d, "pingpong-latency.png")])
            self.assertGreater(os.path.getsize(made[0]), 1000)


if __name__ == "__main__":
    unittest.main()
