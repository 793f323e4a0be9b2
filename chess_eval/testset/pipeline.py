"""Steps as declared units of work: inputs, outputs, parameters, version, fingerprint."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chess_eval.files import atomic_write, sha256_file

log = logging.getLogger(__name__)

STATE_FILE = ".steps.json"  # in the output directory: fingerprints of finished steps


@dataclass(frozen=True)
class StepSpec:
    """What a step reads, writes and depends on, for a given set of arguments."""

    name: str  # e.g. "01_fetch_games"
    version: str  # bump when the step's logic changes its output
    inputs: tuple[str, ...]  # files (hashed) or URLs (taken as given)
    outputs: tuple[Path, ...]
    params: dict[str, Any] = field(default_factory=dict)  # everything else that shapes output


def _input_digest(source: str) -> str:
    path = Path(source)
    if path.is_file():
        return sha256_file(path)
    return f"missing-or-remote:{source}"


def fingerprint_parts(spec: StepSpec) -> dict[str, str]:
    """Separate hashes of the version, the parameters and the inputs, to explain reruns."""
    inputs = hashlib.sha256()
    for source in spec.inputs:
        inputs.update(f"{source}\0{_input_digest(source)}\0".encode())
    params = json.dumps(spec.params, sort_keys=True, default=str)
    return {
        "version": spec.version,
        "params": hashlib.sha256(params.encode()).hexdigest(),
        "inputs": inputs.hexdigest(),
    }


class State:
    """Fingerprints of finished steps, kept in a small JSON file in the output directory."""

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / STATE_FILE
        self.data: dict[str, Any] = {}
        if self.path.is_file():
            try:
                self.data = json.loads(self.path.read_text())
            except json.JSONDecodeError:
                log.warning("%s is unreadable; every step will run", self.path)

    def why_run(self, spec: StepSpec, parts: dict[str, str]) -> str | None:
        """Why the step must run, or None when its outputs are present and current."""
        missing = [str(p) for p in spec.outputs if not p.exists()]
        if missing:
            return "output missing: " + ", ".join(missing)
        done = self.data.get(spec.name)
        if done is None:
            return "no record of a finished run"
        changed = [k for k in ("version", "inputs", "params") if done.get(k) != parts[k]]
        if changed:
            return "changed since last run: " + ", ".join(changed)
        return None

    def record(self, spec: StepSpec, parts: dict[str, str], argv: list[str]) -> None:
        """Mark the step finished with this fingerprint (call only after outputs are in place).

        The step's command line and working directory are kept so that print.py can
        recompute the fingerprint from anywhere.
        """
        self.data[spec.name] = {**parts, "argv": argv, "cwd": os.getcwd(),
                                "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
        with atomic_write(self.path) as handle:
            json.dump(self.data, handle, indent=2, sort_keys=True)

    def forget(self, name: str) -> None:
        """Drop a step's record, so that it runs next time."""
        if self.data.pop(name, None) is not None:
            with atomic_write(self.path) as handle:
                json.dump(self.data, handle, indent=2, sort_keys=True)



def output_stamps(spec: StepSpec) -> dict[Path, tuple[int, int] | None]:
    """(mtime, size) of each output, None when absent: to tell whether a run touched them."""
    return {p: ((st := p.stat()).st_mtime_ns, st.st_size) if p.exists() else None
            for p in spec.outputs}
