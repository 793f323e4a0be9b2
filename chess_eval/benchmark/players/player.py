"""Players behind one small interface: an LLM over HTTP, Stockfish at a set strength, random.

A player turns a question and its prompt into a Reply whose text is parsed like any model's
answer, so baselines go through exactly the same parsing and scoring.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import random
import shutil
import threading
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import chess
import chess.engine

from chess_eval.benchmark.model.backends import backend_for, has_prefix
from chess_eval.benchmark.model.cost import Budget
from chess_eval.benchmark.model.http_backend import HttpBackend
from chess_eval.benchmark.model.interface import Model, ModelConfig, Reply, Request
from chess_eval.benchmark.model.metered import Metered
from chess_eval.benchmark.players.maia import NETS, SHA256, best_move, load_net, net_path
from chess_eval.benchmark.question.questions import Question
from chess_eval.engine import (
    REFERENCE_ENGINE,
    Engine,
    EngineProtocol,
    EngineSettings,
    engine_identity,
    engine_identity_of,
    find_stockfish,
    score_to_cp,
)
from chess_eval.errors import PlayerError
from chess_eval.kvstore import Store

STOCKFISH_NODES = 300_000  # full-strength baseline: node-limited, so reproducible
LIMITED_NODES = 100_000  # node budget of a strength-limited Stockfish


class Player(Protocol):
    """Anything that answers questions."""

    @property
    def id(self) -> str:
        """Stable identity with every option that changes answers (the cache key)."""
        ...

    @property
    def max_concurrency(self) -> int | None:
        """Requests in flight at most (None: as many as asked)."""
        ...

    @property
    def answered_by(self) -> str:
        """What answers: the endpoint of a model, the engine of a baseline (in results)."""
        ...

    def answer(self, question: Question, prompt: str) -> Reply:
        """The player's reply to one question."""
        ...

    def preflight(self) -> None:
        """Check once, before the first question, that the player can answer at all."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...


@runtime_checkable
class EnginePlayer(Player, Protocol):
    """A player whose moves come from an engine: its answers can run on a Dask worker."""

    @property
    def engine_settings(self) -> EngineSettings:
        """The engine its answers need."""
        ...

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from an engine started from `engine_settings`."""
        ...


@dataclass
class RandomPlayer:
    """A uniformly random legal move, seeded per question."""

    seed: int = 0
    max_concurrency: int | None = None
    answered_by: str = "random"

    @property
    def id(self) -> str:
        return f"random:seed={self.seed}"

    def answer(self, question: Question, prompt: str) -> Reply:
        rng = random.Random(f"{self.seed}:{question.id}")
        moves = sorted(m.uci() for m in question.board().legal_moves)
        return Reply.local(rng.choice(moves))

    def preflight(self) -> None:
        pass

    def close(self) -> None:
        pass


class EngineBacked:
    """What every engine-backed player shares: one engine per thread (started on first use),
    settings-only pickling for Dask, and closing them all."""

    def __init__(self, settings: EngineSettings, workers: int) -> None:
        self.settings = settings
        self.max_concurrency = workers
        self._local = threading.local()
        self._engines: list[Engine] = []
        self._lock = threading.Lock()

    @property
    def engine_settings(self) -> EngineSettings:
        """The engine this player's moves need: a Dask worker starts it from these."""
        return self.settings

    def _engine(self) -> Engine:
        if not hasattr(self._local, "engine"):
            engine = Engine(self.settings).__enter__()
            with self._lock:
                self._engines.append(engine)
            self._local.engine = engine
        mine: Engine = self._local.engine  # this thread's engine
        return mine

    def __getstate__(self) -> dict[str, Any]:
        """Settings only: a copy sent to a Dask worker starts its own engines there."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_local", "_engines", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()
        self._engines = []
        self._lock = threading.Lock()

    def answer(self, question: Question, prompt: str) -> Reply:
        return self.answer_with(self._engine(), question, prompt)

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from a given engine started from `engine_settings`."""
        raise NotImplementedError

    def preflight(self) -> None:
        pass

    def close(self) -> None:
        for engine in self._engines:
            engine.close()
        self._engines.clear()


class StockfishPlayer(EngineBacked):
    """Stockfish with options: full strength (node limit), UCI_Elo or Skill Level."""

    def __init__(self, path: str, elo: int | None = None, skill: int | None = None,
                 nodes: int | None = None, workers: int = 1) -> None:
        self.options: dict[str, Any] = {}
        if elo is not None:
            self.options = {"UCI_LimitStrength": True, "UCI_Elo": elo}
        if skill is not None:
            self.options["Skill Level"] = skill
        limited = elo is not None or skill is not None
        self.nodes = nodes or (LIMITED_NODES if limited else STOCKFISH_NODES)
        super().__init__(EngineSettings(path=path, options=tuple(self.options.items())),
                         workers)
        parts = [f"{k}={v}" for k, v in (("elo", elo), ("skill", skill)) if v is not None]
        # The engine's name and version are part of the identity: two builds search
        # differently, so one's cached moves are never the other's.
        self.answered_by = engine_identity(path)
        self.id = ":".join(["stockfish", *parts, f"nodes={self.nodes}"]) + \
            f"@{self.answered_by}"

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from a given engine started from `engine_settings`."""
        move = engine.play(question.board(), chess.engine.Limit(nodes=self.nodes))
        return Reply.local(move.uci())


def random_coin(seed: int, question: Question, percent: int) -> bool:
    """Whether a mixed player moves at random on this question: a seeded coin per question,
    so every move reproduces."""
    coin = random.Random(f"coin:{seed}:{question.id}").random()
    return coin * 100 < percent


@dataclass(frozen=True)
class Family:
    """An engine of another family than Stockfish, as a test player (not a rung)."""

    binary: str  # the program, looked for on PATH and in /usr/games (Debian's packages)
    package: str  # Debian's package that installs it
    protocol: EngineProtocol = EngineProtocol.UCI
    args: tuple[str, ...] = ()  # arguments that start it in its protocol
    options: tuple[tuple[str, int | bool], ...] = ()  # books off, one thread: reproducible


# Engines Debian ships that play by a depth limit, reproducibly, from any FEN. Fairy-Max
# lacks setboard and Phalanx rejects sd, so neither is here. GNU Chess 6 and Toga II both
# descend from Fruit 2.1: one lineage, which the validation counts as one family.
FAMILIES: dict[str, Family] = {
    "gnuchess": Family("gnuchess", "gnuchess", args=("--uci",), options=(("OwnBook", False),)),
    "toga2": Family("toga2", "toga2", options=(("OwnBook", False),)),
    "glaurung": Family("glaurung", "glaurung", options=(("OwnBook", False),)),
    "sjeng": Family("sjeng", "sjeng", protocol=EngineProtocol.XBOARD),
}
MAX_DEPTH = 20
FINGERPRINT_DEPTH = 3  # a family engine's workers are checked by their moves at this depth


def find_family(name: str) -> str:
    """Path of a family engine's binary; PlayerError naming its Debian package if missing."""
    family = FAMILIES[name]
    path = shutil.which(family.binary) or shutil.which(family.binary, path="/usr/games")
    if path is None:
        raise PlayerError(f"{name!r} needs the program {family.binary!r}: install Debian's "
                          f"{family.package!r} package (apt-get install {family.package})")
    return path


class FamilyPlayer(EngineBacked):
    """An engine of another family at a fixed depth, optionally mixed with random moves (with
    probability `percent`/100, by a seeded coin per question)."""

    def __init__(self, name: str, depth: int, percent: int = 0, seed: int = 0,
                 workers: int = 1) -> None:
        family = FAMILIES[name]
        path = find_family(name)
        super().__init__(EngineSettings(path=path, options=family.options,
                                        protocol=family.protocol, args=family.args,
                                        fingerprint_depth=FINGERPRINT_DEPTH), workers)
        self.depth = depth
        self.percent = percent
        self.seed = seed
        self.answered_by = engine_identity_of(self.settings)
        mixed = f",random={percent}:seed={seed}" if percent else ""
        self.id = f"{name}:depth={depth}{mixed}@{self.answered_by}"

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from a given engine started from `engine_settings`."""
        if self.percent and random_coin(self.seed, question, self.percent):
            return RandomPlayer(seed=self.seed).answer(question, prompt)
        move = engine.play(question.board(), chess.engine.Limit(depth=self.depth))
        return Reply.local(move.uci())


class SoftmaxPlayer(EngineBacked):
    """Plausible errors: Stockfish's `top` best moves at `nodes` nodes, one drawn with
    probability proportional to exp(score / temp) (scores in centipawns), seeded per question.
    Its mistakes are the near-best moves a human might play, not random blunders."""

    def __init__(self, path: str, temp: int, nodes: int, top: int = 5, seed: int = 0,
                 workers: int = 1) -> None:
        super().__init__(EngineSettings(path=path), workers)
        self.temp = temp
        self.nodes = nodes
        self.top = top
        self.seed = seed
        self.answered_by = engine_identity(path)
        self.id = f"softmax:temp={temp},nodes={nodes},top={top}:seed={seed}@{self.answered_by}"

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from a given engine started from `engine_settings`."""
        ranked = engine.ranked_moves(question.board(), chess.engine.Limit(nodes=self.nodes),
                                     self.top)
        cps = [score_to_cp(m.score) for m in ranked]
        # Against the best score of the lines (at a low node count MultiPV need not list
        # them best first, say a mate found in a later line): every weight is at most 1.
        best = max(cps)
        weights = [math.exp((cp - best) / self.temp) for cp in cps]
        rng = random.Random(f"softmax:{self.seed}:{question.id}")
        [pick] = rng.choices(ranked, weights=weights)
        return Reply.local(pick.move.uci())


class MixPlayer:
    """A weak rung: a seeded coin picks a uniformly random legal move (with probability
    `percent`/100) or node-limited Stockfish's best move, so every move reproduces."""

    def __init__(self, path: str, percent: int, nodes: int, seed: int = 0,
                 workers: int = 1) -> None:
        self.percent = percent
        self.random = RandomPlayer(seed=seed)
        self.engine = StockfishPlayer(path, nodes=nodes, workers=workers)
        self.max_concurrency = workers
        self.answered_by = self.engine.answered_by
        self.id = f"mix:random={percent},nodes={nodes}:seed={seed}@{self.answered_by}"

    @property
    def engine_settings(self) -> EngineSettings:
        """The engine this player's moves need: a Dask worker starts it from these."""
        return self.engine.settings

    def _random(self, question: Question) -> bool:
        return random_coin(self.random.seed, question, self.percent)

    def answer(self, question: Question, prompt: str) -> Reply:
        if self._random(question):
            return self.random.answer(question, prompt)
        return self.engine.answer(question, prompt)

    def answer_with(self, engine: Engine, question: Question, prompt: str) -> Reply:
        """The reply, from a given engine started from `engine_settings`."""
        if self._random(question):
            return self.random.answer(question, prompt)
        return self.engine.answer_with(engine, question, prompt)

    def preflight(self) -> None:
        pass

    def close(self) -> None:
        self.engine.close()


class MaiaPlayer:
    """A Maia-1 net at one node: the policy's most likely legal move given the game so far
    (its last eight positions), so every move is a pure function of the game and replays."""

    # The input encoding and move choice (players.maia): a change that can move a move bumps it.
    VERSION = 1

    def __init__(self, net: int) -> None:
        net_path(net)  # present and unaltered, downloaded on first use: checked up front
        self.net = net
        self.max_concurrency: int | None = None
        self.answered_by = f"maia-{net}@{SHA256[net][:12]}"
        self.id = f"maia:net={net}@{self.answered_by}/v{self.VERSION}"

    def answer(self, question: Question, prompt: str) -> Reply:
        """The net's move in the question's position (with the game's moves when known)."""
        return Reply.local(best_move(load_net(self.net), question.board()).uci())

    def preflight(self) -> None:
        load_net(self.net)  # a file that does not parse fails here, before the first move

    def close(self) -> None:
        pass


class ModelPlayer:
    """A model behind the model layer (an OpenAI-compatible endpoint by default): every
    protocol asks it through `generate`."""

    def __init__(self, config: ModelConfig, model: Model | None = None) -> None:
        self.config = config
        self.model: Model = model or Metered(HttpBackend(config), config)
        self.max_concurrency = None
        self._checked = False
        self._checking = threading.Lock()  # held while the preflight is asked
        # The endpoint is part of the identity: one model name at two servers (a 4-bit
        # quantisation here, bf16 there) is two players whose answers never mix, unless
        # --endpoint-id names them one. It is canonical (localhost is 127.0.0.1).
        self.answered_by = self.model.endpoint
        self.id = _model_id(config, self.model.endpoint)
        # Ids under which earlier versions cached this player's answers (the endpoint as
        # written): looked up after the id, so an upgrade buys nothing again. Only the HTTP
        # backend had them.
        http = isinstance(getattr(self.model, "backend", None), HttpBackend)
        legacy = _model_id(config, config.endpoint_as_written) if http else self.id
        self.aliases: tuple[str, ...] = (legacy,) if legacy != self.id else ()

    def answer(self, question: Question, prompt: str) -> Reply:
        """The reply to a single-prompt question (a user message)."""
        return self.model.generate(Request(messages=({"role": "user", "content": prompt},)),
                                   question.id)

    @property
    def temperature(self) -> float:
        """The sampling temperature (a re-ask at 0 buys the same reply again)."""
        return self.config.temperature

    @property
    def budget(self) -> Budget:
        """What this invocation may still spend (--max-cost), and its books."""
        return self.model.budget

    def generate(self, request: Request, label: str) -> Reply:
        """The model's reply to a protocol's request."""
        return self.model.generate(request, label)

    def preflight(self) -> None:
        # Once per player, however many runs of questions (or threads) ask it at once.
        with self._checking:
            if not self._checked:
                self.model.preflight()
                self._checked = True

    def close(self) -> None:
        pass


def _model_id(config: ModelConfig, endpoint: str) -> str:
    """A model's identity: its name and a digest of every setting that changes answers."""
    shown: dict[str, Any] = {"temperature": config.temperature,
                             "max_tokens": config.max_tokens, "extra": config.extra,
                             "endpoint": endpoint}
    if config.system or config.stop:  # absent from ids made before these options existed
        shown.update(system=config.system, stop=list(config.stop))
    if config.json_answers:
        shown["response_format"] = "json"
    if config.reasoning_effort:
        shown["reasoning_effort"] = config.reasoning_effort
    if config.generation:  # absent from ids made before Inspect's settings were kept
        shown["generation"] = config.generation
    digest = hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:12]
    suffix = f"+effort={config.reasoning_effort}" if config.reasoning_effort else ""
    return f"{config.model}{suffix}@{digest}"


class Completing:
    """A model asked by text completion (the pgn protocol's static run): its answer to a
    prompt is the completion's text."""

    def __init__(self, player: ModelPlayer, max_tokens: int) -> None:
        self.player = player
        self.max_tokens = max_tokens
        self.id = player.id
        self.aliases = player.aliases
        self.max_concurrency = player.max_concurrency
        self.answered_by = player.answered_by

    @property
    def budget(self) -> Budget:
        """The model's budget (--max-cost)."""
        return self.player.budget

    def answer(self, question: Question, prompt: str) -> Reply:
        """The completion of the prompt."""
        return self.player.generate(Request(prompt=prompt, max_tokens=self.max_tokens),
                                    question.id)

    def preflight(self) -> None:
        """The model's preflight (at /completions)."""
        self.player.preflight()

    def close(self) -> None:
        """Nothing of its own to release."""
        self.player.close()


def aliases_of(player: Player) -> tuple[str, ...]:
    """Ids under which earlier versions cached the player's answers (none for a baseline)."""
    return tuple(getattr(player, "aliases", ()))


def cached_answer(cache: Store, key: str, player: Player) -> Any | None:
    """The cached reply under `key` (which starts with the player's id), else the one an
    earlier version stored under an alias of the id (copied to `key`, found directly next)."""
    hit = cache.get(key)
    if hit is not None:
        return hit
    for alias in aliases_of(player):
        hit = cache.get(alias + key[len(player.id):])
        if hit is not None:
            cache.put(key, hit)
            cache.commit()
            return hit
    return None


def budget_of(player: Player) -> Budget | None:
    """The --max-cost budget of a model (None for a baseline, which costs nothing)."""
    budget = getattr(player, "budget", None)
    return budget if isinstance(budget, Budget) else None


def budget_stop(*players: Player) -> str | None:
    """Why the run stops on budget: the note of the first of `players` whose --max-cost is
    spent (None while each has room, or is a baseline)."""
    for player in players:
        budget = budget_of(player)
        if budget is not None and budget.exhausted:
            return budget.note()
    return None


def _options(spec: str) -> tuple[str, dict[str, int]]:
    name, _, rest = spec.partition(":")
    options: dict[str, int] = {}
    for part in filter(None, rest.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not value.lstrip("-").isdigit():
            raise PlayerError(f"bad option {part!r} in {spec!r}: expected key=number")
        options[key] = int(value)
    return name, options


BASELINES = ("random", "stockfish", "mix", "softmax", "maia", *FAMILIES)
BASELINE_SPECS = (  # what --model accepts besides a model, as every subcommand's help says
    "'random' (a uniformly random legal move); 'stockfish' (full strength, "
    f"{STOCKFISH_NODES:,} nodes a move); 'stockfish:nodes=N'; 'stockfish:elo=N' or "
    f"'stockfish:skill=N' (UCI_Elo 1320-3190 or Skill Level, {LIMITED_NODES:,} nodes unless "
    "nodes=N is added, e.g. stockfish:elo=1800,nodes=20000); 'mix:random=P,nodes=N' (a "
    "random move with probability P%%, else Stockfish at N nodes: the ladder's mix rungs); test "
    "players unlike the rungs: 'softmax:temp=T,nodes=N' (one of Stockfish's 5 best moves at N "
    "nodes, drawn with weight exp(cp/T)) and 'gnuchess|toga2|glaurung|sjeng:depth=D' (Debian's "
    "engine of that name at depth D; ',random=P' mixes in random moves); human-like players: "
    f"'maia:net=N' (the Maia-1 net trained on Lichess players rated N to N+99, N one of "
    f"{NETS[0]}, {NETS[1]}, ..., {NETS[-1]}, at one node)")


def baseline_stockfish(explicit: str | None) -> str:
    """The Stockfish a baseline (and a mode's judge) plays on: --stockfish or STOCKFISH_PATH
    when given, else, among the builds the lookup finds, one the reference ladder serves,
    as `play` takes it, so one spec is one player in every mode (run, play, match, serve,
    puzzles, worldmodel); the log says which build it took."""
    return find_stockfish(explicit, prefer=REFERENCE_ENGINE)


def is_baseline(spec: str) -> bool:
    """Whether --model names a baseline player rather than a model at an endpoint."""
    return spec.split(":")[0] in BASELINES


def unknown_baseline(spec: str, base_url: str | None) -> str | None:
    """Why --model `spec` is refused before any request, else None. The rule: a baseline's
    name, a provider/model (or a backend's prefix, inspect:...) is taken; a name with
    key=value options, as only baselines take, is refused; so is any other name without a
    provider unless --base-url names the endpoint (a local server's `llama3`): the default
    endpoint, OpenRouter, names every model provider/model."""
    name, _, rest = spec.partition(":")
    if is_baseline(spec) or "/" in spec or has_prefix(spec):
        return None
    if "=" not in rest and base_url is not None:
        return None
    near = difflib.get_close_matches(name, BASELINES, n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    what = f"--model {spec!r}: {name!r}" if rest else f"--model {spec!r}"
    return (f"{what} is not a known baseline{hint}; the baselines are "
            f"{', '.join(BASELINES)}; a model is named provider/model (e.g. openai/gpt-4o), "
            "or by its bare name with --base-url")


def make_player(spec: str, chat: ModelConfig | None, stockfish: str | None, seed: int,
                workers: int, budget: Budget | None = None) -> Player:
    """The player named by --model: 'random', 'stockfish[:elo=N|skill=N|nodes=N]',
    'mix:random=P,nodes=N' (a random move with probability P%, else Stockfish), or a model
    (`budget`: an invocation's, to share with its other models)."""
    name, options = _options(spec) if is_baseline(spec) else (spec, {})
    if name == "random":
        return RandomPlayer(seed=seed)
    if name == "mix":
        if set(options) != {"random", "nodes"} or not 0 <= options["random"] <= 100 \
                or options["nodes"] < 1:
            raise PlayerError(f"bad {spec!r}: expected mix:random=P,nodes=N with P in 0-100")
        return MixPlayer(baseline_stockfish(stockfish), options["random"], options["nodes"],
                         seed=seed, workers=workers)
    if name == "stockfish":
        unknown = set(options) - {"elo", "skill", "nodes"}
        if unknown:
            raise PlayerError(f"unknown stockfish option(s) {sorted(unknown)}: use elo, skill, "
                              "nodes")
        if "elo" in options and not 1320 <= options["elo"] <= 3190:
            raise PlayerError("stockfish:elo must be within the engine's UCI_Elo range")
        return StockfishPlayer(baseline_stockfish(stockfish), elo=options.get("elo"),
                               skill=options.get("skill"), nodes=options.get("nodes"),
                               workers=workers)
    if name == "softmax":
        return _softmax(spec, options, stockfish, seed, workers)
    if name in FAMILIES:
        return _family(spec, name, options, seed, workers)
    if name == "maia":
        if set(options) != {"net"}:
            raise PlayerError(f"bad {spec!r}: expected maia:net=N with N one of "
                              f"{', '.join(map(str, NETS))}")
        return MaiaPlayer(options["net"])
    if chat is None:
        raise PlayerError(f"{spec!r} is not a baseline player and no endpoint is configured")
    # Through Inspect's model API (its provider's variables), else the HTTP backend; either
    # under the one wrapper that owns the money.
    return ModelPlayer(chat, model=Metered(backend_for(spec, chat), chat, budget))


def _softmax(spec: str, options: dict[str, int], stockfish: str | None, seed: int,
             workers: int) -> SoftmaxPlayer:
    if not {"temp", "nodes"} <= set(options) <= {"temp", "nodes", "top"} \
            or min(options.values()) < 1:
        raise PlayerError(f"bad {spec!r}: expected softmax:temp=T,nodes=N[,top=K], each >= 1")
    return SoftmaxPlayer(baseline_stockfish(stockfish), options["temp"], options["nodes"],
                         top=options.get("top", 5), seed=seed, workers=workers)


def _family(spec: str, name: str, options: dict[str, int], seed: int,
            workers: int) -> FamilyPlayer:
    if not {"depth"} <= set(options) <= {"depth", "random"} \
            or not 1 <= options["depth"] <= MAX_DEPTH \
            or not 0 <= options.get("random", 0) <= 100:
        raise PlayerError(f"bad {spec!r}: expected {name}:depth=D[,random=P] with D in "
                          f"1-{MAX_DEPTH} and P in 0-100")
    return FamilyPlayer(name, options["depth"], options.get("random", 0), seed=seed,
                        workers=workers)
