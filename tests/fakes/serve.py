"""A scripted OpenAI-compatible provider on a fixed local port, for trying summarybench by
hand on any repository without a key or a cost (the new-user pass of issue 33):

    python -m tests.fakes.serve --port 8765 --unknown lazy-codr --generic lazy-coder

Every model name it is asked for answers as the test suite's scripted models do
(``scripted_provider.py``): summaries from the code's identifiers, the helper's picks and
queries, the task model's choices; its judge reads the prompt (the share of a summary's
words found in the code: a score of 1 to 5, the summary with the larger share wins a
comparison), so that its verdicts tell a good summary from a vague one; a name given with
``--unknown``
answers HTTP 404 as OpenAI does for a misspelt model, one given with ``--generic`` the
same vague summary for every unit. ``summarybench doctor``'s questions are answered.
It runs until Ctrl-C (or ``--hours``) and prints each request's model and phase.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from tests.evaluators.judge.scripted import pairwise_json, pointwise_json, quality, read_prompt
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.fakes.scripted_provider import ScriptedProvider, phase_of

GENERIC = "Handles the given input and returns the result to the caller."


class Serve:
    def __init__(self, unknown: set[str], generic: set[str], quiet: bool) -> None:
        self.script = ScriptedProvider()
        self.unknown, self.generic, self.quiet = unknown, generic, quiet

    def __call__(self, body: dict[str, Any]) -> str | Reply:
        model = str(body.get("model", ""))
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        phase = phase_of(body)
        if not self.quiet:
            print(f"{time.strftime('%H:%M:%S')} {model} {phase}", flush=True)
        if model in self.unknown:
            return Reply(f"The model `{model}` does not exist or you do not have access to "
                         "it.", status=404)
        if prompt.startswith("Reply with exactly this JSON object"):
            return '{"ok": true}'
        if prompt.startswith("Reply with the single word"):
            return "ok"
        if model in self.generic and phase == "generation":
            return GENERIC
        if phase in ("judge/pointwise", "judge/pairwise"):
            return judge(prompt)
        try:
            return self.script(body)
        except (KeyError, IndexError, ValueError):
            # a completion task of a function the script does not know: an empty body
            return "```python\npass\n```"


def judge(prompt: str) -> str:
    """A verdict read from the prompt: the share of each summary's words that occur in the
    code, said in the reasoning."""
    read = read_prompt(prompt)
    shares = [quality(read.code, summary) for summary in read.summaries]
    if read.kind == "pointwise":
        score = max(1, min(5, 1 + round(4 * shares[0])))
        return pointwise_json(score, reasoning=f"{shares[0]:.0%} of the summary's words "
                                               "occur in the code")
    a, b = shares
    winner = "tie" if abs(a - b) < 0.05 else ("A" if a > b else "B")
    return pairwise_json(winner, reasoning=f"words found in the code: A {a:.0%}, B {b:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--unknown", action="append", default=[], metavar="MODEL",
                        help="a model name that answers HTTP 404 (repeatable)")
    parser.add_argument("--generic", action="append", default=[], metavar="MODEL",
                        help="a model whose every summary is the same vague sentence")
    parser.add_argument("--hours", type=float, default=8.0, help="stop after this long")
    parser.add_argument("--quiet", action="store_true", help="do not print each request")
    args = parser.parse_args()
    try:
        server = FakeOpenAIServer(respond=Serve(set(args.unknown), set(args.generic),
                                                args.quiet),
                                  port=args.port, max_lifetime_s=args.hours * 3600).start()
    except OSError as exc:
        # A provider left running answers instead of this one: say so, not a traceback.
        raise SystemExit(f"port {args.port}: {exc.strerror}; stop what listens there or "
                         "pick another with --port") from None
    print(f"scripted provider at {server.base_url} (Ctrl-C stops it)", flush=True)
    try:
        while server._httpd is not None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
