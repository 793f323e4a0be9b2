"""Engine work on Dask: real `dask scheduler` and `dask worker` programs on 127.0.0.1, a worker
killed with SIGKILL mid-step, a worker with another engine version, Ctrl-C of an embedded run.
Step 06 on the small build is the work throughout; its questions file is compared byte for
byte with the embedded cluster's."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import chess
import psutil
import pytest

from chess_eval.cluster import ClusterSettings, EngineCluster
from chess_eval.engine import EngineSettings
from chess_eval.errors import ChessEvalError, EngineError
from chess_eval.evaluation import EvalSetting, evaluate_position
from tests.conftest import ROOT, evaluated, fault_engine
from tests.testset.steps import step

evaluate = step("06_evaluate")
ACTIVATE = Path(sys.prefix) / "bin" / "activate"  # the venv `make setup` made
FAST = ["--scan-nodes", "20000", "--near-nodes", "40000", "--move-nodes", "20000",
        "--max-candidates", "3"]
# Slow enough that a worker can be killed, or Ctrl-C sent, while most of the step is to do.
SLOW = ["--scan-nodes", "40000", "--near-nodes", "40000", "--move-nodes", "40000"]
FENS = [chess.STARTING_FEN,
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "8/8/4k3/8/2K5/8/3P4/8 w - - 0 1",
        "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"]


def _inputs(build: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for name in ("positions.csv", "puzzles.csv"):
        shutil.copy(build / name, out / name)
    return out


def _argv(out: Path, stockfish: str, *extra: str) -> list[str]:
    return ["--out", str(out), "--questions", str(out / "q.csv"), "--stockfish", stockfish,
            *extra]


def _wait_for(check, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


class External:
    """A `dask scheduler` and `dask worker` processes on 127.0.0.1, started as the README
    says: in a shell, `cd` to the checkout, the venv activated, `dask worker ...`, with no
    PYTHONPATH (the venv has the project installed by `make setup`)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []

    def _start(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        environ = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | (env or {})
        command = f"cd {shlex.quote(str(ROOT))} && . {shlex.quote(str(ACTIVATE))} && " \
            f"exec dask {shlex.join(argv)}"
        proc = subprocess.Popen(["bash", "-c", command], env=environ,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    @property
    def address(self) -> str:
        return json.loads(self.file.read_text())["address"]

    def _file_parses(self) -> bool:
        """The scheduler writes its file in more than one step: it exists (empty, or half
        written) before it parses, so wait for a complete file, not for the name."""
        try:
            return bool(self.address)
        except (OSError, ValueError, KeyError):
            return False

    def scheduler(self) -> None:
        self._start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(self.file)])
        _wait_for(self._file_parses, "a complete scheduler file")

    def worker(self, nanny: bool = True, env: dict[str, str] | None = None) -> None:
        argv = ["worker", "--scheduler-file", str(self.file), "--host", "127.0.0.1",
                "--nthreads", "1", "--no-dashboard"] + ([] if nanny else ["--no-nanny"])
        self.workers.append(self._start(argv, env))

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client
        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(n, timeout=60)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@contextmanager
def external(tmp: Path, workers: int, **worker_options) -> Iterator[External]:
    """A scheduler and `workers` workers, stopped at the end (whatever happened)."""
    cluster = External(tmp)
    try:
        cluster.scheduler()
        for _ in range(workers):
            cluster.worker(**worker_options)
        cluster.wait_for_workers(workers)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def embedded_questions(small_build: Path, tmp_path_factory: pytest.TempPathFactory,
                       stockfish: str) -> bytes:
    """Step 06's questions from the embedded cluster with one worker: the reference."""
    out = _inputs(small_build, tmp_path_factory.mktemp("embedded"))
    assert evaluate.main(_argv(out, stockfish, "--workers", "1", *FAST)) == 0
    return (out / "q.csv").read_bytes()


@pytest.mark.parametrize("workers", [2, 3])
def test_step_06_is_byte_identical_for_any_number_of_workers(
        small_build: Path, tmp_path: Path, stockfish: str, embedded_questions: bytes,
        workers: int) -> None:
    out = _inputs(small_build, tmp_path)
    assert evaluate.main(_argv(out, stockfish, "--workers", str(workers), *FAST)) == 0
    assert (out / "q.csv").read_bytes() == embedded_questions


def test_an_external_cluster_gives_the_embedded_bytes(
        small_build: Path, tmp_path: Path, stockfish: str, embedded_questions: bytes,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real scheduler and two real worker programs, reached by DASK_SCHEDULER_ADDRESS;
    the workers share no output directory with the client (they never write)."""
    out = _inputs(small_build, tmp_path / "out")
    with external(tmp_path, 2) as cluster:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.address)
        assert evaluate.main(_argv(out, stockfish, *FAST)) == 0
    assert (out / "q.csv").read_bytes() == embedded_questions


def test_a_worker_killed_mid_step_has_its_work_redone_elsewhere(
        small_build: Path, tmp_path: Path, stockfish: str) -> None:
    reference = _inputs(small_build, tmp_path / "reference")
    assert evaluate.main(_argv(reference, stockfish, "--workers", "2", *SLOW)) == 0
    out = _inputs(small_build, tmp_path / "out")
    with external(tmp_path, 2, nanny=False) as cluster:
        argv = [sys.executable, str(ROOT / "steps" / "06_evaluate.py"),
                *_argv(out, stockfish, "--scheduler", cluster.address, *SLOW)]
        proc = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: evaluated(out / "evals.db") >= 3, "three evaluations")
        victim = cluster.workers[0]
        engines = psutil.Process(victim.pid).children(recursive=True)
        os.kill(victim.pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert (out / "q.csv").read_bytes() == (reference / "q.csv").read_bytes()
    # The killed worker's Stockfish sees its input close and quits.
    psutil.wait_procs(engines, timeout=10)
    assert not [p for p in engines if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_a_worker_whose_engine_searches_differently_stops_the_step(
        small_build: Path, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Identity by behaviour: a worker's engine under the same name whose searches differ
    (its node limits one higher, as a custom build's might be) is refused, naming the
    position that differed."""
    wrapper = fault_engine(tmp_path, stockfish, monkeypatch, "die", "")
    out = _inputs(small_build, tmp_path / "out")
    with external(tmp_path, 1) as cluster:
        cluster.worker(env={"FAULT_NODES": "1"})
        cluster.wait_for_workers(2)
        assert evaluate.main(_argv(out, wrapper, "--scheduler", cluster.address)) == 2
    err = capsys.readouterr().err
    assert "which searches differently from this machine's 'Stockfish 15.1'" in err
    assert "(position 1 (rnbqkbnr/pppppppp" in err
    assert err.count("\n") == 1 and err.startswith("error: worker tcp://127.0.0.1:")
    assert not (out / "q.csv").exists() and evaluated(out / "evals.db") == 0


def test_an_unreachable_scheduler_fails_within_seconds(
        small_build: Path, tmp_path: Path, stockfish: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = _inputs(small_build, tmp_path)
    start = time.monotonic()
    assert evaluate.main(_argv(out, stockfish, "--scheduler", "tcp://127.0.0.1:9")) == 2
    assert time.monotonic() - start < 15
    err = capsys.readouterr().err
    assert err.startswith("error: could not reach the Dask scheduler at tcp://127.0.0.1:9")
    assert err.count("\n") == 1


def test_ctrl_c_ends_the_embedded_cluster_and_every_engine(
        small_build: Path, tmp_path: Path, stockfish: str) -> None:
    """Real worker processes (the default outside the tests), Ctrl-C to the whole process
    group as a terminal sends it; the rerun resumes from what was committed."""
    out = _inputs(small_build, tmp_path)
    argv = [sys.executable, str(ROOT / "steps" / "06_evaluate.py"),
            *_argv(out, stockfish, "--workers", "2", *SLOW)]
    proc = subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for(lambda: evaluated(out / "evals.db") >= 2, "two evaluations")
    tree = psutil.Process(proc.pid).children(recursive=True)
    engines = [p for p in tree if "stockfish" in " ".join(p.cmdline())]
    assert len(engines) >= 2  # one per worker, at least
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, err
    _, alive = psutil.wait_procs(tree, timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
    done = evaluated(out / "evals.db")
    assert done >= 2 and not (out / "q.csv").exists()


def test_engine_cluster_runs_tasks_in_item_order_on_every_worker(stockfish: str) -> None:
    """map keeps the items' order and as_completed pairs each result with its item; the
    figures equal one engine's in this process."""
    setting = EvalSetting(scan_nodes=20_000, move_nodes=20_000, margin=20, max_candidates=2)
    task = _moves_task(setting)
    from chess_eval.engine import Engine
    with Engine(EngineSettings(stockfish)) as engine:
        expected = [task(engine, fen) for fen in FENS]
    with EngineCluster(EngineSettings(stockfish), ClusterSettings(workers=3)) as cluster:
        assert cluster.workers == 3 and cluster.name.startswith("Stockfish")
        assert list(cluster.map(task, FENS * 2)) == expected * 2
        pairs = dict(cluster.as_completed(task, FENS))
    assert [pairs[fen] for fen in FENS] == expected


def test_a_task_error_reaches_the_client(stockfish: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with EngineCluster(EngineSettings(stockfish), ClusterSettings(workers=1)) as cluster, \
            pytest.raises(ValueError, match="part of fen"):
        list(cluster.map(_bad_task, ["not a fen"]))
    # An engine that dies on every search of the task (its first four searches are its
    # fingerprint, taken once as the cluster starts): three attempts, then the error.
    wrapper = fault_engine(tmp_path, stockfish, monkeypatch, "die", "5,6,7")
    with EngineCluster(EngineSettings(wrapper), ClusterSettings(workers=1)) as cluster, \
            pytest.raises(EngineError, match=r"failed 3 times on the position 8/8/4k3"):
        list(cluster.map(_moves_task(EvalSetting(20_000, 0, 20, 1)), FENS[2:3]))
    with pytest.raises(ChessEvalError, match="could not start /bin/false"), \
            EngineCluster(EngineSettings("/bin/false"), ClusterSettings(workers=1)):
        pass


def _moves_task(setting: EvalSetting):
    def task(engine, fen: str) -> list[tuple[str, int]]:
        result = evaluate_position(engine, chess.Board(fen), setting)
        return [(move.uci(), cp) for move, cp in result.moves]
    return task


def _bad_task(engine, fen: str) -> None:
    chess.Board(fen)


@pytest.mark.parametrize(("option", "env", "named"), [
    ("nonsense", None, "--scheduler: 'nonsense'"),
    (None, "tcp://host-without-port", "DASK_SCHEDULER_ADDRESS: 'tcp://host-without-port'")])
def test_a_malformed_scheduler_address_is_named(
        small_build: Path, tmp_path: Path, stockfish: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], option: str | None, env: str | None,
        named: str) -> None:
    if env:
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", env)
    out = _inputs(small_build, tmp_path)
    extra = ["--scheduler", option] if option else []
    assert evaluate.main(_argv(out, stockfish, *extra)) == 2
    err = capsys.readouterr().err
    assert err == f"error: {named} is not a scheduler address (tcp://HOST:PORT, or " \
        "tls://HOST:PORT with Dask's TLS settings)\n"


def test_a_stockfish_baseline_answers_the_same_on_any_cluster(tmp_path: Path,
                                                              stockfish: str) -> None:
    """The static run's engine answers come from the cluster's workers; the client caches
    them, and 1 or 3 workers give the same answers and the same scores."""
    import benchmark
    answers, scores = [], []
    for workers in ("1", "3"):
        out = tmp_path / workers
        argv = ["--model", "stockfish:nodes=5000", "--questions", str(ROOT / "questions.csv"),
                "--out", str(out), "--limit", "30", "--stockfish", stockfish,
                "--bootstrap", "100", "--workers", workers]
        assert benchmark.main(argv) == 0
        with sqlite3.connect(out / "cache.db") as db:
            answers.append(sorted(db.execute("SELECT key, value FROM answers")))
        result = json.loads(next(out.glob("*.json")).read_text())
        scores.append({k: result[k] for k in ("n", "legal_rate", "acpl", "best_move_rate")})
    assert len(answers[0]) == 30 and answers[0] == answers[1] and scores[0] == scores[1]


INTRUDER = """
import os, sys
from distributed import Client
from distributed.security import Security
address, how = sys.argv[1], sys.argv[2]
options = {"security": Security.temporary()} if how == "own-credentials" else {}
if how == "plain-tcp":
    address = address.replace("tls://", "tcp://")
try:
    with Client(address, timeout=10, **options) as client:
        print("ran code on the workers:", client.run(os.getpid))
except Exception as exc:
    print("refused:", type(exc).__name__)
    sys.exit(3)
"""


@pytest.mark.parametrize("how", ["plain-tcp", "tls-without-credentials", "own-credentials"])
def test_the_embedded_cluster_refuses_a_client_without_its_credentials(
        stockfish: str, how: str) -> None:
    """Another local user's process reaches the embedded scheduler on 127.0.0.1: with a plain
    client, TLS without certificates, or TLS with certificates of its own, it is refused and
    runs nothing; the run's own client (holding the temporary credentials) works."""
    with EngineCluster(EngineSettings(stockfish), ClusterSettings(workers=1)) as cluster:
        assert cluster.address.startswith("tls://127.0.0.1:")
        intruder = subprocess.run([sys.executable, "-c", INTRUDER, cluster.address, how],
                                  capture_output=True, text=True, timeout=120)
        assert cluster.workers == 1  # the run's own client is served all along
    assert intruder.returncode == 3, intruder.stdout + intruder.stderr
    assert intruder.stdout.startswith("refused:") and "ran code" not in intruder.stdout
