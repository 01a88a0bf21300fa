"""The shared harness of the benchmark scripts (``benchmarks/_harness.py``) and the scripts' layout.

The layout checks: every script runs as ``python -m benchmarks.<name>`` (its ``--help`` says so),
none edits ``sys.path`` or silences the import order, none speaks of the project's history
(issue numbers, "slice", SPEC sections) in its docstring or help, and ``python benchmarks/verify.py``
works as a plain file from any folder.
"""

import ast
import contextlib
import doctest
import importlib
import importlib.util
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from benchmarks import _harness as harness
from benchmarks import verify

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if not p.stem.startswith("_") and p.stem != "verify")
HISTORY = re.compile(r"\bSPEC\b|\bissue\s+\d+|\bslice\b|§", re.IGNORECASE)


def test_doctests():
    result = doctest.testmod(harness, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0


# ----------------------------------------------------------------------------------------------
# binomial intervals
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 1, 7, 25, 49, 50])
def test_clopper_pearson_inverts_the_two_one_sided_tests(k):
    n, level = 50, 0.95
    lo, hi = harness.binomial_interval(k, n, level)
    if k == 0:
        assert lo == 0.0
    else:  # P(X >= k | lo) = alpha / 2
        assert binom.sf(k - 1, n, lo) == pytest.approx(0.025, rel=1e-8)
    if k == n:
        assert hi == 1.0
    else:  # P(X <= k | hi) = alpha / 2
        assert binom.cdf(k, n, hi) == pytest.approx(0.025, rel=1e-8)


def test_clopper_pearson_covers_every_rate_and_wilson_is_shorter():
    n, level = 40, 0.9
    k = np.arange(n + 1)
    cp_lo, cp_hi = harness.binomial_interval(k, n, level)
    w_lo, w_hi = harness.binomial_interval(k, n, level, method="wilson")
    for p in np.linspace(0.005, 0.995, 199):
        pmf = binom.pmf(k, n, p)
        assert pmf[(cp_lo <= p) & (p <= cp_hi)].sum() >= level - 1e-12  # exact coverage
    assert np.all(w_hi - w_lo <= cp_hi - cp_lo + 1e-12)
    assert np.all((0 <= w_lo) & (w_lo <= k / n) & (k / n <= w_hi) & (w_hi <= 1))


def test_wilson_closed_form():
    lo, hi = harness.binomial_interval(12, 200, 0.95, method="wilson")
    z, n, ph = 1.959963984540054, 200, 12 / 200
    centre = (ph + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n))
    assert (lo, hi) == pytest.approx((centre - half, centre + half), rel=1e-12)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": 3, "n": 2}, "0 <= k <= n"),
        ({"k": 0, "n": 0}, "n >= 1"),
        ({"k": 1, "n": 5, "level": 1.0}, "level"),
        ({"k": 1, "n": 5, "method": "exact"}, "method"),
    ],
)
def test_binomial_interval_refuses_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        harness.binomial_interval(**kwargs)


def test_binomial_band_is_the_central_quantile_band():
    # the band of benchmarks/calibration_tests.py: the stored quick results depend on these values
    for reps in (3, 8, 100, 500):
        assert harness.binomial_band(reps, 0.05, 0.99) == (
            binom.ppf(0.005, reps, 0.05) / reps,
            binom.ppf(0.995, reps, 0.05) / reps,
        )


def test_t_interval():
    x = np.array([[1.0, 2.0, 3.0, 4.0]]).T
    mean, half = harness.t_interval(x, level=0.9)
    assert mean[0] == 2.5 and half[0] == pytest.approx(2.3533634 * np.std(x, ddof=1) / 2, rel=1e-6)
    assert harness.t_interval(np.ones((1, 3)))[1].tolist() == [0.0, 0.0, 0.0]


# ----------------------------------------------------------------------------------------------
# timing and memory
# ----------------------------------------------------------------------------------------------
def test_time_rotated_rotates_the_order_and_keeps_only_scalars():
    calls = []

    def make(name, value):
        def fn(x):
            calls.append(name)
            return value(x)

        return fn

    funcs = {"a": make("a", np.sort), "b": make("b", np.sum), "c": make("c", lambda x: 1)}
    t = harness.time_rotated(funcs, np.arange(10.0), rounds=4)
    assert t.order == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert calls == [name for order in t.order for name in order]
    assert {k: len(v) for k, v in t.times.items()} == {"a": 4, "b": 4, "c": 4}
    assert t.values == {"b": 45.0, "c": 1.0}  # np.sort's array is not kept
    assert t.median["a"] == float(np.median(t.times["a"])) and t.best["b"] == min(t.times["b"])
    assert t.ratios("a") == {"b_over_a": t.ratio("b", "a"), "c_over_a": t.ratio("c", "a")}


def test_against_floor_ratios_are_ratios_of_medians():
    x = np.random.default_rng(0).integers(0, 100, 5000)
    timings, ratios = harness.against_floor(
        {"unique": np.unique, "sort": np.sort}, {"bincount": np.bincount}, x, rounds=3
    )
    assert list(timings.times) == ["bincount", "unique", "sort"]  # floors first
    assert ratios == {
        "unique_over_bincount": timings.median["unique"] / timings.median["bincount"],
        "sort_over_bincount": timings.median["sort"] / timings.median["bincount"],
    }


def test_best_of_and_timer():
    sec, value = harness.best_of(lambda: 3, 2)
    assert value == 3 and 0 <= sec < 1
    with harness.Timer() as t:
        pass
    assert 0 <= t.seconds <= t.elapsed()


def test_traced_peak_sees_numpy_buffers():
    assert harness.traced_peak(np.ones, 10**6) >= 8 * 10**6


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_peak_rss():
    assert harness.peak_rss_mib() > 1
    assert harness.status_kib("VmRSS") > 0


# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------
def test_data_makers():
    y, p = harness.binary_predictions(1000, seed=[0, 3])
    assert y.dtype == np.int64 and set(np.unique(y)) <= {0, 1} and np.all((0 < p) & (p < 1))
    assert np.array_equal(harness.binary_predictions(50)[1], harness.binary_predictions(50, 0)[1])
    for variance in ("feasible", "symmetric"):
        S, Y = harness.second_order_snapshots(500, 1, variance=variance)
        m, s2 = S.T
        assert S.shape == Y.shape == (500, 2) and np.all(s2 <= m * (1 - m) + 1e-15)
    S, _ = harness.second_order_snapshots(500, 1, variance="symmetric")
    assert np.all(S[:, 1] <= np.minimum(S[:, 0], 1 - S[:, 0]) ** 2 + 1e-15)
    with pytest.raises(ValueError, match="variance"):
        harness.second_order_snapshots(5, variance="wide")
    y, P = harness.multiclass_predictions(2000, 4, seed=1)
    assert P.shape == (2000, 4) and np.allclose(P.sum(axis=1), 1) and set(np.unique(y)) <= set(range(4))
    # labels drawn from P: the mean of P's columns matches the label frequencies
    assert np.allclose(np.bincount(y, minlength=4) / 2000, P.mean(axis=0), atol=0.03)


# ----------------------------------------------------------------------------------------------
# running, provenance and output
# ----------------------------------------------------------------------------------------------
def test_parser_and_output_folders(tmp_path):
    p = harness.parser(str(BENCH / "rate.py"), "Title line.\n\nMore.", n_jobs="workers", seed=True)
    assert p.prog == "python -m benchmarks.rate" and p.description == "Title line."
    assert harness.parse_args(p, []).out == harness.RESULTS_DIR == ROOT / "benchmarks" / "results"
    assert harness.parse_args(p, ["--quick"]).out == harness.QUICK_DIR == harness.RESULTS_DIR / "quick"
    args = harness.parse_args(p, ["--out", str(tmp_path), "--n-jobs", "2"])
    assert args.out == tmp_path and args.n_jobs == 2 and args.seed == 0
    assert harness.args_config(args)["out"] == harness.repo_relative(tmp_path)


def test_command_line_and_provenance(tmp_path):
    cmd = harness.command_line(str(BENCH / "rate.py"), ["--quick", "--out", str(ROOT / "x y")])
    assert cmd == "python -m benchmarks.rate --quick --out 'x y'"
    prov = harness.provenance(str(BENCH / "rate.py"), ["--quick"], config={"a": 1}, wall_time_s=1.23456)
    assert prov["command"] == "python -m benchmarks.rate --quick" and prov["wall_time_s"] == 1.235
    assert {"commit", "git_dirty", "cpu_count", "date", "load_average", "python", "packages"} <= set(prov)
    assert set(prov["packages"]) == set(harness.PACKAGES) and prov["packages"]["numpy"] == np.__version__
    payload = {"x": np.float64(0.5), "v": np.arange(2)}
    path = harness.write_json(tmp_path / "a" / "r.json", payload, provenance=prov)
    saved = json.loads(path.read_text())
    assert saved["x"] == 0.5 and saved["v"] == [0, 1] and saved["provenance"]["config"] == {"a": 1}
    path = harness.write_result(str(BENCH / "rate.py"), [], tmp_path / "w.json", {"y": 1}, config={"b": 2})
    saved = json.loads(path.read_text())
    assert saved["y"] == 1 and saved["provenance"]["config"] == {"b": 2}
    assert saved["provenance"]["command"] == "python -m benchmarks.rate"


def test_save_figure(tmp_path):
    import matplotlib

    fig, axes = harness.subplots(1, 2, figsize=(4, 2))
    line = harness.plot_band(axes[0], [0, 1], [0, 1], [-1, 0], [1, 2], "o-", label="m", alpha=0.3)
    band = axes[0].collections[0]
    assert line.get_label() == "m" and band.get_alpha() == 0.3
    assert np.allclose(band.get_facecolor()[0][:3], matplotlib.colors.to_rgb(line.get_color()))
    path = harness.save_figure(fig, tmp_path / "sub" / "f.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    managed = plt.figure()
    harness.save_figure(managed, tmp_path / "g.png", tight_layout=False)
    assert not plt.fignum_exists(managed.number)


def test_run_module_runs_a_script_at_the_root():
    out = harness.run_module(str(BENCH / "speed_binned.py"), "--help")
    assert out.startswith("usage: python -m benchmarks.speed_binned")
    with pytest.raises(RuntimeError, match="exited with 2"):
        harness.run_module(str(BENCH / "speed_binned.py"), "--no-such-option")


# ----------------------------------------------------------------------------------------------
# the scripts' layout
# ----------------------------------------------------------------------------------------------
def test_no_script_edits_sys_path_or_silences_the_import_order():
    for path in sorted(BENCH.glob("*.py")):
        text = path.read_text()
        assert "sys.path" not in text, path.name
        assert "noqa: E402" not in text and "noqa:E402" not in text, path.name


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_runs_as_a_module_and_speaks_of_its_experiment(name):
    if name == "scale_dask":
        pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")
    module = importlib.import_module(f"benchmarks.{name}")
    doc = ast.get_docstring(ast.parse((BENCH / f"{name}.py").read_text()))
    assert doc and not HISTORY.search(doc), f"{name}: {HISTORY.search(doc or '')}"
    assert f"python -m benchmarks.{name}" in doc  # its usage, as run from the repository root
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    help_text = out.getvalue()
    assert help_text.startswith(f"usage: python -m benchmarks.{name} ")
    assert "--out" in help_text and not HISTORY.search(help_text)


def test_every_stored_quick_result_is_kept_by_the_gitignore():
    lines = (harness.QUICK_DIR / ".gitignore").read_text().splitlines()
    kept = {line[1:] for line in lines if line.startswith("!")} - {".gitignore"}
    # one file per experiment, and one per BLAS kernel family for the BLAS-dependent ones
    expected = {
        stem.replace(".json", ".*.json") if name in verify.BLAS_DEPENDENT else stem
        for name, (_, stem) in verify.EXPERIMENTS.items()
    }
    assert kept == expected
    assert all(list(harness.QUICK_DIR.glob(pattern)) for pattern in kept)
    assert set(verify.EXPERIMENTS) <= set(SCRIPTS)
    assert verify.BLAS_DEPENDENT <= set(verify.EXPERIMENTS)


def test_blas_dependent_results_are_kept_per_kernel_family(monkeypatch, tmp_path):
    arch = verify.blas_architecture()
    assert re.fullmatch(r"[\w.]+-[\w.]+", arch)
    path = verify.stored_quick_path("rate")
    assert path.name == f"rate_quick.{arch}.json"
    assert verify.stored_quick_path("report_scale").name == "report_scale_quick.json"
    # a kernel family with no stored result: the comparison is skipped with its reason, not failed
    monkeypatch.setattr(verify, "blas_architecture", lambda: "openblas-Nowhere")
    new = tmp_path / "rate_quick.json"
    new.write_text("{}")
    with pytest.raises(
        verify.MissingReference, match="no stored quick result for the BLAS kernels openblas-Nowhere"
    ):
        verify.assert_matches_stored("rate", new)
    assert verify.assert_matches_stored("rate", new, missing_ok=True) is None  # reason printed
    monkeypatch.setattr(verify, "run_quick", lambda name, out_dir: new)
    assert verify.main(["rate"]) == 0


def test_verify_runs_as_a_file_from_any_folder(tmp_path):
    """`python benchmarks/verify.py NAME` (the team's command) needs no sys.path edit anywhere."""
    cmd = [sys.executable, str(BENCH / "verify.py"), "decision_utility"]
    res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "decision_utility: matches the stored quick result" in res.stdout
    res = subprocess.run(
        [sys.executable, "-m", "benchmarks.verify", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert res.returncode == 0 and res.stdout.startswith("usage: python benchmarks/verify.py")


def test_verify_reports_a_failing_script(monkeypatch, capsys):
    def broken(name, out_dir):
        raise ValueError("broken on purpose")

    monkeypatch.setattr(verify, "run_quick", broken)
    assert verify.main(["decision_utility"]) == 1
    assert "decision_utility: the quick run `python -m benchmarks.decision_utility --quick` failed" in (
        capsys.readouterr().out
    )
    assert verify.quick_argv("doubly_labelled", "d") == ["--quick", "--out", "d", "--seeds", "2"]
    assert importlib.util.find_spec("benchmarks.verify").origin == str(BENCH / "verify.py")


# ----------------------------------------------------------------------------------------------
# every command the docs give is true
# ----------------------------------------------------------------------------------------------
DOCS = [ROOT / "README.md", BENCH / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DOCS += sorted((ROOT / "docs" / "benchmarks").glob("*.md")) + sorted((ROOT / "docs" / "guide").glob("*.md"))
COMMAND = re.compile(r"python -m benchmarks\.([a-z_0-9]+)([^\n]*)")
VERIFY = re.compile(r"python benchmarks/verify\.py([^\n]*)")


def _code(text):
    """The code of a Markdown or reST text: fenced blocks, indented lines, inline spans."""
    text = re.sub(r"\\\n\s*", " ", text)  # shell line continuations
    code = []

    def fenced(match):
        code.extend(match.group(0).splitlines())
        return ""

    text = re.sub(r"```.*?```", fenced, text, flags=re.S)
    rest = []
    for line in text.splitlines():
        (code if line.startswith("    ") and "`" not in line else rest).append(line)
    code += [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", "\n".join(rest))]
    return code


def _arguments(tail):
    tail = re.split(r"\s#|&&|;|\|", tail)[0]  # a comment or the next command
    return shlex.split(tail)


def documented_commands():
    """``(where, name, argv)`` of every ``python -m benchmarks.<name> ...`` in the docs and scripts."""
    sources = [(p.relative_to(ROOT), p.read_text()) for p in DOCS]
    for path in sorted(BENCH.glob("*.py")):
        sources.append((path.relative_to(ROOT), ast.get_docstring(ast.parse(path.read_text())) or ""))
    out = []
    for where, text in sources:
        for line in _code(text):
            out += [(str(where), m.group(1), _arguments(m.group(2))) for m in COMMAND.finditer(line)]
            out += [(str(where), "verify", _arguments(m.group(1))) for m in VERIFY.finditer(line)]
    return out


class _Parsed(Exception):
    pass


def test_the_docs_give_commands():
    commands = documented_commands()
    assert len(commands) > 60
    assert {name for _, name, _ in commands} >= set(SCRIPTS) | {"verify"}
    for path in DOCS:
        if path.name != "changelog.md":  # the changelog records what was run then
            old = re.findall(r"python benchmarks/(?!verify\.py)[a-z_0-9]+\.py", path.read_text())
            assert not old, f"{path.relative_to(ROOT)}: {old}"


@pytest.mark.parametrize("where, name, argv", documented_commands())
def test_every_documented_command_parses(where, name, argv, monkeypatch):
    if name == "verify":
        names = [a for a in argv if not a.startswith("-") and not re.fullmatch(r"NAME|<\w+>", a)]
        assert set(names) <= set(verify.EXPERIMENTS), where
        assert set(a for a in argv if a.startswith("-")) <= {"--update"}, where
        return
    if name == "scale_dask":
        pytest.importorskip("dask.array", reason="dask is not installed (pip install 'skcal[dask]')")
    module = importlib.import_module(f"benchmarks.{name}")
    parsed = []

    def parse_only(parser, argv=None):
        parsed.append(parser.parse_args(argv))
        raise _Parsed

    monkeypatch.setattr(harness, "parse_args", parse_only)
    if "--help" in argv:
        with pytest.raises(SystemExit) as stop, contextlib.redirect_stdout(io.StringIO()):
            module.main(argv)
        assert stop.value.code == 0, where
        return
    with pytest.raises(_Parsed):
        module.main(argv)
    assert parsed, f"{where}: python -m benchmarks.{name} {' '.join(argv)}"


def test_every_stored_full_result_has_its_rerun_command_on_a_page():
    """A stored ``provenance.command`` records the command as it was run; the docs give its module form."""
    text = "\n".join(p.read_text() for p in DOCS)
    text = re.sub(r"\s+", " ", re.sub(r"\\\n\s*", " ", text))
    missing = []
    for path in sorted(harness.RESULTS_DIR.glob("*.json")):
        runs = json.loads(path.read_text())
        for run in runs if isinstance(runs, list) else [runs]:
            command = run["provenance"]["command"]
            rerun = re.sub(r"^python benchmarks/([a-z_0-9]+)\.py", r"python -m benchmarks.\1", command)
            # a folder outside the repository is one machine's: the docs name it DIR
            rerun = re.sub(r"(--out|--scratch) (?:\.\./|/)\S+", r"\1 DIR", rerun)
            assert rerun.startswith("python -m benchmarks."), (path.name, command)
            if rerun not in text:
                missing.append(f"{path.name}: {rerun}")
    assert not missing, missing
