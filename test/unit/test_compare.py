# Copyright (C) MPICH-CX contributors. See COPYRIGHT in top-level directory.
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

# MPICH-CX's version, from its one source (VERSION's first line)
with open(os.path.join(HERE, "..", "..", "VERSION")) as f:
    CX_VERSION = f.readline().strip()

CX_OUT = """# library: MPICH Version:\t4.0.2
# library: MPICH-CX Version:\t%s
# bench: pingpong
bench,case,x,metric,value,unit
pingpong,latency,8,latency,0.5,us
pingpong,bandwidth,8,bandwidth,100,MB/s
""" % CX_VERSION


class ParseTest(unittest.TestCase):
    def test_rows_and_library(self):
        lib, rows = compare.parse_output(CX_OUT)
        self.assertEqual(lib[1], "MPICH-CX Version:\t" + CX_VERSION)
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

    def test_emulated_nodes(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            self.assertEqual(compare.mpiexec_cmd(d, 4, "b", ["-x"]),
                             [os.path.join(d, "bin", "mpiexec"), "-hosts", "localhost", "-n", "4", "b", "-x"])
            compare.EMULATED_NODES = 3
            try:
                self.assertEqual(compare.mpiexec_cmd(d, 7, "b", []),
                                 [os.path.join(d, "bin", "mpiexec"), "-launcher", "fork", "-hosts",
                                  "cxnode1,cxnode2,cxnode3", "-ppn", "3", "-n", "7", "b"])
                open(os.path.join(d, "bin", "ompi_info"), "w").close()
                os.chmod(os.path.join(d, "bin", "ompi_info"), 0o755)
                with self.assertRaises(compare.CompareError):
                    compare.mpiexec_cmd(d, 4, "b", [])
            finally:
                compare.EMULATED_NODES = 0


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
        self.assertEqual(runs[0], ("mt_msgrate", ["--threads", "1", "--quick"], 2, None))
        self.assertEqual(runs[-1], ("pingpong", ["--sizes", "8", "--quick"], 2, None))
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


# Sample outputs in the formats OSU 7.4 and IMB 2021.11 print (values made up).
OSU_LATENCY = """
# OSU MPI Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       0.24
2                       0.15
1024                    0.51
"""
OSU_BW = """
# OSU MPI Bandwidth Test v7.4
# Datatype: MPI_CHAR.
# Size      Bandwidth (MB/s)
1                      16.72
65536                12000.50
"""
OSU_LATENCY_MT = """# Number of Sender threads: 1 
# Number of Receiver threads: 2

# OSU MPI Multi-threaded Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)
1                       0.32
64                      0.22
"""
OSU_ALLREDUCE_FULL = """
# OSU MPI Allreduce Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
4                       1.50              1.20              1.80         100
8                       1.60              1.30              1.90         100
"""
OSU_VALIDATED = """
# OSU MPI Latency Test v7.4
# Size       Avg Latency(us)          Validation
1                       0.24                Pass
2                       0.25                Fail
"""
IMB_PINGPONG_NP3 = """#----------------------------------------------------------------
#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part
#----------------------------------------------------------------
# Date                  : Thu Nov 27 02:50:00 2026
# Benchmarking PingPong
# #processes = 2 
# ( 1 additional process waiting in MPI_Barrier)
#---------------------------------------------------
       #bytes #repetitions      t[usec]   Mbytes/sec
            0          100         0.13         0.00
            1          100         0.14         7.25


# All processes entering MPI_Finalize
"""
IMB_ALLREDUCE = """#---------------------------------------------------
# Benchmarking Allreduce 
# #processes = 4 
#---------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
            0         1000         0.03         0.04         0.03
            4         1000         1.10         1.30         1.20
"""
IMB_ACCUMULATE = """#---------------------------------------------------
# Benchmarking Accumulate 
# #processes = 2 
#---------------------------------------------------
#
#    MODE: NON-AGGREGATE 
#
       #bytes #repetitions      t[usec]   Mbytes/sec
            0          100         0.04         0.00
            4          100         3.87         1.03

#---------------------------------------------------
# Benchmarking Accumulate 
# #processes = 2 
#---------------------------------------------------
#
#    MODE: AGGREGATE 
#
       #bytes #repetitions      t[usec]   Mbytes/sec
            0          100         0.03         0.00
            4          100         3.43         1.17


# All processes entering MPI_Finalize
"""


class ExtParseTest(unittest.TestCase):
    def test_osu_latency(self):
        info, rows = compare.parse_osu(OSU_LATENCY)
        self.assertEqual(info, {})
        self.assertEqual(rows, [(1, "latency", 0.24, "us"), (2, "latency", 0.15, "us"),
                                (1024, "latency", 0.51, "us")])

    def test_osu_bandwidth(self):
        _, rows = compare.parse_osu(OSU_BW)
        self.assertEqual(rows[-1], (65536, "bandwidth", 12000.5, "MB/s"))

    def test_osu_threads_in_case(self):
        run = compare.Run("osu_latency_mt", [], 2, "np=2")
        rows = compare.ext_rows(run, OSU_LATENCY_MT)
        self.assertEqual(rows[0], ("osu_latency_mt", "np=2 threads=1:2", 1, "latency", 0.32, "us"))

    def test_osu_full_columns(self):
        _, rows = compare.parse_osu(OSU_ALLREDUCE_FULL)
        self.assertEqual(rows[:3], [(4, "latency", 1.5, "us"), (4, "min_latency", 1.2, "us"),
                                    (4, "max_latency", 1.8, "us")])
        self.assertEqual(len(rows), 6)     # iterations are not results

    def test_osu_validation_failure_is_an_error(self):
        with self.assertRaises(compare.CompareError):
            compare.parse_osu(OSU_VALIDATED)
        _, rows = compare.parse_osu(OSU_VALIDATED.replace("Fail", "Pass"))
        self.assertEqual([r[0] for r in rows], [1, 2])

    def test_osu_errors(self):
        with self.assertRaises(compare.CompareError):
            compare.parse_osu("# OSU MPI Latency Test v7.4\n")          # no rows
        with self.assertRaises(compare.CompareError):
            compare.parse_osu("# Size       Avg Latency(us)\n1     0.2    0.3\n")

    def test_imb_pingpong_with_idle_ranks(self):
        rows = compare.parse_imb(IMB_PINGPONG_NP3)
        self.assertEqual(rows[:2], [("PingPong", 2, "", 0, "latency", 0.13, "us"),
                                    ("PingPong", 2, "", 0, "bandwidth", 0.0, "MB/s")])
        run = compare.Run("imb_pingpong", [], 3, "np=3")
        out = compare.ext_rows(run, IMB_PINGPONG_NP3)
        self.assertEqual(out[-1], ("imb_pingpong", "np=3 active=2", 1, "bandwidth", 7.25, "MB/s"))

    def test_imb_collective(self):
        run = compare.Run("imb_allreduce", [], 4, "np=4")
        out = compare.ext_rows(run, IMB_ALLREDUCE)
        self.assertIn(("imb_allreduce", "np=4", 4, "latency", 1.2, "us"), out)
        self.assertIn(("imb_allreduce", "np=4", 4, "min_latency", 1.1, "us"), out)
        self.assertIn(("imb_allreduce", "np=4", 4, "max_latency", 1.3, "us"), out)
        self.assertEqual(len(out), 6)

    def test_imb_rma_modes(self):
        run = compare.Run("imb_accumulate", [], 2, "np=2")
        out = compare.ext_rows(run, IMB_ACCUMULATE)
        cases = sorted(set(r[1] for r in out))
        self.assertEqual(cases, ["np=2 aggregate", "np=2 non-aggregate"])
        self.assertIn(("imb_accumulate", "np=2 aggregate", 4, "latency", 3.43, "us"), out)
        # every result distinct, as the runner requires
        self.assertEqual(len(set(r[:4] for r in out)), len(out))

    def test_imb_errors(self):
        with self.assertRaises(compare.CompareError):
            compare.parse_imb("# All processes entering MPI_Finalize\n")
        with self.assertRaises(compare.CompareError):
            compare.parse_imb("# Benchmarking PingPong\n #bytes #repetitions t[usec]\n 0 100\n")
        timed_out = IMB_ALLREDUCE.replace(
            "            4         1000         1.10         1.30         1.20",
            '            4 time-out.; Time limit (secs_per_sample * msg_sizes_list_len) is over; use "-time X"')
        with self.assertRaises(compare.CompareError) as e:
            compare.parse_imb(timed_out)
        self.assertIn("stopped at 4 bytes", str(e.exception))

    def test_other_imb_benchmark_named(self):
        # imb_pingpong:PingPing runs both; the other one's rows say which
        run = compare.Run("imb_pingpong", ["PingPing"], 2, "np=2 PingPing")
        out = compare.ext_rows(run, IMB_ALLREDUCE.replace("= 4", "= 2") + IMB_PINGPONG_NP3)
        self.assertEqual(sorted(set(r[1] for r in out)), ["np=2 PingPing", "np=2 PingPing bench=Allreduce"])


class ExtOptionsTest(unittest.TestCase):
    def test_defaults_quick_and_ranks(self):
        runs = compare.expand(["osu_latency", "osu_allreduce", "imb_pingpong"], quick=False, np=4)
        self.assertEqual(runs[0], ("osu_latency", ["-m", "1:65536"], 2, "np=2"))   # two ranks only
        self.assertEqual(runs[1].np, 4)
        self.assertEqual(runs[1].case, "np=4")
        self.assertEqual(runs[2].np, 4)
        runs = compare.expand(["osu_bcast"], quick=True)
        self.assertEqual(runs[0].np, 2)
        self.assertEqual(runs[0].args, compare.EXT_BENCHMARKS["osu_bcast"].quick)

    def test_at_ranks_and_custom_args(self):
        runs = compare.expand(["osu_allreduce@4:-m 8:8 -i 50", "imb_allreduce@3"], quick=True, np=6)
        self.assertEqual(runs[0].np, 4)
        # your arguments come after the defaults, so they win
        self.assertEqual(runs[0].args[-4:], ["-m", "8:8", "-i", "50"])
        self.assertEqual(runs[0].case, "np=4 -m 8:8 -i 50")
        self.assertEqual((runs[1].np, runs[1].case), (3, "np=3"))
        with self.assertRaises(compare.CompareError):
            compare.expand(["osu_latency@4"], quick=False)      # exactly two ranks
        with self.assertRaises(compare.CompareError):
            compare.expand(["pingpong@3"], quick=False)
        with self.assertRaises(compare.CompareError):
            compare.expand(["osu_bcast@1"], quick=False)
        with self.assertRaises(compare.CompareError):
            compare.expand(["osu_nosuch"], quick=False)
        self.assertEqual(compare.expand(["pingpong@2"], quick=False)[0].np, 2)

    def test_mpiexec_commands(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            cmd = compare.mpiexec_cmd(d, 4, "/b/osu_bcast", ["-m", "1:8"])
            self.assertEqual(cmd, [os.path.join(d, "bin", "mpiexec"), "-hosts", "localhost", "-n", "4",
                                   "/b/osu_bcast", "-m", "1:8"])
            for tool in ("ompi_info", "mpiexec.openmpi"):
                path = os.path.join(d, "bin", tool)
                open(path, "w").close()
                os.chmod(path, 0o755)
            cmd = compare.mpiexec_cmd(d, 64, "/b/osu_bcast", [])
            self.assertEqual(cmd[:5], [os.path.join(d, "bin", "mpiexec.openmpi"), "--host", "localhost:64",
                                       "-n", "64"])
            self.assertIn("--oversubscribe", cmd)
            self.assertNotIn("--oversubscribe", compare.mpiexec_cmd(d, 2, "/b/x", []))

    def test_dir_options(self):
        mpis = ["cx", "baseline"]
        self.assertEqual(compare.parse_dir_options(["/o"], "--osu-dir", mpis), {"cx": "/o", "baseline": "/o"})
        self.assertEqual(compare.parse_dir_options(["cx=/o", "baseline=/p"], "--osu-dir", mpis),
                         {"cx": "/o", "baseline": "/p"})
        # "=" in a path that names no MPI is part of the path
        self.assertEqual(compare.parse_dir_options(["/a=b"], "--osu-dir", ["cx"]), {"cx": "/a=b"})

    def test_find_programs(self):
        with tempfile.TemporaryDirectory() as d:
            for rel in ("c/mpi/pt2pt/standard/osu_latency", "deep/er/c/mpi/pt2pt/standard/osu_latency",
                        "c/mpi/collective/blocking/osu_bcast"):
                path = os.path.join(d, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "w").close()
                os.chmod(path, 0o755)
            found = compare.find_programs(d, ["osu_latency", "osu_bcast"], "--osu-dir")
            self.assertEqual(found["osu_latency"], os.path.join(d, "c/mpi/pt2pt/standard/osu_latency"))
            with self.assertRaises(compare.CompareError) as e:
                compare.find_programs(d, ["osu_bw"], "--osu-dir")
            self.assertIn("osu_bw", str(e.exception))
            with self.assertRaises(compare.CompareError):
                compare.find_programs(os.path.join(d, "none"), ["osu_bw"], "--osu-dir")

    def test_tarball_checks(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(compare.CompareError) as e:
                compare.check_tarball("osu", d)
            self.assertIn("osu-micro-benchmarks-7.4.tar.gz", str(e.exception))
            self.assertIn("--osu-dir", str(e.exception))
            with open(os.path.join(d, "mpi-benchmarks-IMB-v2021.11.tar.gz"), "w") as f:
                f.write("not the release")
            with self.assertRaises(compare.CompareError) as e:
                compare.check_tarball("imb", d)
            self.assertIn("not the pinned", str(e.exception))
            self.assertIn("--imb-dir", str(e.exception))

    def test_cache_key(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            cc = os.path.join(d, "bin", "mpicc")
            with open(cc, "w") as f:
                f.write("#!/bin/sh\n# flags A\n")
            os.chmod(cc, 0o755)
            k1 = compare.ext_build_key("osu", d)
            self.assertTrue(k1.startswith("osu-"))
            self.assertEqual(k1, compare.ext_build_key("osu", d))
            self.assertNotEqual(k1, compare.ext_build_key("imb", d))
            with open(cc, "w") as f:
                f.write("#!/bin/sh\n# flags B\n")      # reinstalled with other flags
            self.assertNotEqual(k1, compare.ext_build_key("osu", d))
        os.environ.pop("MPICH_CX_CACHE", None)
        self.assertTrue(compare.ext_cache_root(None).endswith(os.path.join(".cache", "mpich-cx", "ext")))
        self.assertEqual(compare.ext_cache_root("rel"), os.path.abspath("rel"))

    def test_loaded_library_check(self):
        with tempfile.TemporaryDirectory() as d:
            lib = os.path.join(d, "lib")
            os.mkdir(lib)
            cx = os.path.join(lib, "libmpi.so.12.2.2")
            with open(cx, "wb") as f:
                f.write(b"\0MPICH Version:\t%s\n\0MPICH-CX Version:\t%s\n\0")
            logs = os.path.join(d, "ld")
            os.mkdir(logs)
            with open(os.path.join(logs, "ld.123"), "w") as f:
                f.write("    123:\tcalling init: /lib/x86_64-linux-gnu/libc.so.6\n"
                        "    123:\tcalling init: %s\n"
                        "    123:\tcalling init: %s/libmpicxx.so.12 [1]\n" % (cx, lib))
            libs = compare.loaded_mpi_libraries(logs)
            self.assertEqual(libs, [os.path.realpath(cx)])
            self.assertIn(os.path.realpath(cx), compare.loaded_library_check("cx-pip", d, libs))
            with self.assertRaises(compare.CompareError):
                compare.loaded_library_check("baseline", d, libs)
            with self.assertRaises(compare.CompareError):
                compare.loaded_library_check("ompi", d, libs)
            with self.assertRaises(compare.CompareError):    # not from the MPI's prefix
                compare.loaded_library_check("cx", os.path.join(d, "other"), libs)
            with self.assertRaises(compare.CompareError):    # nothing seen
                compare.loaded_library_check("cx", d, [])
            plain = os.path.join(lib, "libmpi.so.40")
            with open(plain, "wb") as f:
                f.write(b"Open MPI v4.1.4")
            compare.loaded_library_check("ompi", d, [plain])
            with self.assertRaises(compare.CompareError):
                compare.loaded_library_check("cx", d, [plain])


if __name__ == "__main__":
    unittest.main()
