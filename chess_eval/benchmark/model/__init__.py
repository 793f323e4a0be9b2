"""The model layer: how a model is asked, and the money each reply costs.

interface: a Request in, a Reply out, the typed errors, the Model every mode asks through.
A backend asks once: http_backend (an OpenAI-compatible API over HTTP) and inspect_backend
(anything Inspect's model API reaches) turn a Request into one provider call and its answer
into a Reply or a typed error. metered is the one wrapper over every backend: it reserves
--max-cost before a request, retries and backs off, charges every completed reply (cost:
the budget, --price and the ledger) and hands each reply to its cache before anything may
stop the run (inflight: requests counted until stored). backends picks the backend of a
--model by its prefix; ledger writes the books of what was bought; inspect_internals holds
every private Inspect name used.

Imports point one way: this package imports only the statistics and the question layer below
it, never the players, the core or a mode, which all ask through it (how a move is asked, the
protocols, is the players' own: chess_eval.benchmark.players.protocols).
"""
