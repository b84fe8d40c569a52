"""The progress of an evaluation on stderr: a tqdm bar when tqdm is installed, else a plain
progress line."""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    """Counts played deals; shows them on stderr if ``enabled``."""

    def __init__(self, total: int, enabled: bool, desc: str) -> None:
        self.total, self.n, self.enabled = total, 0, enabled
        self.desc = desc
        self.bar: Any = None
        self.last = 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm  # optional
        except ImportError:
            return
        self.bar = tqdm(total=total, desc=desc, unit="deal", file=sys.stderr)

    def update(self, n: int) -> None:
        """``n`` more deals played."""
        self.n += n
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if now - self.last > 0.5 or self.n == self.total:
            self.last = now
            print(f"\r{self.desc}: {self.n}/{self.total} deals", end="", file=sys.stderr)

    def close(self) -> None:
        """End the bar (or the line)."""
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr)


__all__ = ["Progress"]
