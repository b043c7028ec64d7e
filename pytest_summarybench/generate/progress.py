"""Progress of a long phase: calls done of total, rate, ETA and cost so far.

On a terminal it is a tqdm bar; in a CI log (stderr not a TTY) it is one plain line
every ``interval_s`` seconds and a final one, formatted by tqdm too, with no carriage
returns.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts finished units of work and shows them (or stays silent when disabled)."""

    def __init__(self, total: int, desc: str, *, enabled: bool = True,
                 stream: TextIO | None = None, interval_s: float = 10.0,
                 unit: str = "call") -> None:
        from tqdm import tqdm  # local: keep the plugin cheap to import

        self._format_meter = tqdm.format_meter
        self.total = total
        self.desc = desc
        self.unit = unit
        self.done = 0
        self.cost = 0.0
        self.cost_unknown = False
        self._stream = stream or sys.stderr
        self._interval_s = interval_s
        self._started = time.monotonic()
        self._last_line = self._started
        self._enabled = enabled and total > 0
        self._tty = self._enabled and bool(getattr(self._stream, "isatty", lambda: False)())
        self._bar = (tqdm(total=total, desc=desc, unit=unit, file=self._stream,
                          dynamic_ncols=True, smoothing=0.1, leave=True)
                     if self._tty else None)

    def _cost_text(self) -> str:
        text = f"${self.cost:.4f}"
        return text + " + unknown" if self.cost_unknown else text

    def advance(self, n: int = 1, cost: float | None = 0.0) -> None:
        """Count ``n`` finished units that cost ``cost`` USD (None: unknown)."""
        self.done += n
        if cost is None:
            self.cost_unknown = True
        else:
            self.cost += cost
        if self._bar is not None:
            self._bar.set_postfix_str(self._cost_text(), refresh=False)
            self._bar.update(n)
        elif self._enabled:
            now = time.monotonic()
            if now - self._last_line >= self._interval_s:
                self._last_line = now
                self._write_line(now)

    def line(self, now: float | None = None) -> str:
        """The plain progress line (what CI logs show)."""
        elapsed = (now or time.monotonic()) - self._started
        meter = self._format_meter(self.done, self.total, elapsed, ncols=0, prefix=self.desc,
                                   unit=self.unit)
        return f"{meter} cost {self._cost_text()}"

    def _write_line(self, now: float) -> None:
        self._stream.write(self.line(now) + "\n")
        self._stream.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._enabled:
            self._write_line(time.monotonic())
