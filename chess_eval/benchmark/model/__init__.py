"""The model layer: how a model is asked, and the money each reply costs.

interface: a Request in, a Reply out, the typed errors, the Model every mode asks through.
A backend asks once: http_backend (an OpenAI-compatible API over HTTP) and inspect_backend
(anything Inspect's model API reaches) turn a Request into one provider call and its answer
into a Reply or a typed error. metered is the one wrapper over every backend: it reserves
--max-cost before a request, retries and backs off, charges every completed reply (cost:
the budget, --price and the ledger) and hands each reply to its cache before anything may
stop the run (inflight: requests counted until stored). protocols: how a move is asked
(fen, blind, chat, tools, pgn), each one small object over a Model. backends picks the
backend of a --model by its prefix; inspect_internals holds every private Inspect name used.

Imports point one way: this package imports core's answers, questions and prompts, never a
mode; the players (chess_eval.benchmark.players) and the modes ask through it.
"""
