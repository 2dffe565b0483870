"""Whether a core is free right now for work beside the model (hybrid_match()'s text side).

The model's run takes every core it may; a third thread then competes with it, and each hand-off
waits for the scheduler: on the loaded 2-core machine the worker thread made hybrid_match slower, on
a quiet one faster (docs/benchmarks.md). What counts is the next few milliseconds, so the machine's
runnable threads *now* decide (Linux: ``/proc/loadavg``'s fourth field, this thread included). The
1-minute load average, the fallback where the system does not say, lags by a minute and counts a busy
caller itself: a query stream on an otherwise idle 2-core machine holds it near 1, where the choice
flipped from query to query."""
from __future__ import annotations

import os

from tesseradb.embed.model import cpu_count

LOADAVG = "/proc/loadavg"


_OPEN: dict[str, int] = {}      # the file, opened once: a pread of it is one system call (open, read,
                                # close were three: ~50 us right after a model run, ~15 with the one)


def running_now() -> int | None:
    """The threads runnable on the machine at this moment (this one included), or None where unknown."""
    try:
        fd = _OPEN.get(LOADAVG)
        if fd is None:
            fd = _OPEN[LOADAVG] = os.open(LOADAVG, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        data = os.pread(fd, 256, 0)     # procfs makes the text again on each read from offset 0
        return int(data.split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def spare_core() -> bool:
    """True when a core is free beside this thread now (fewer runnable threads than cores); without
    that count, when the 1-minute load average leaves a core (True where the system says neither)."""
    running = running_now()
    if running is not None:
        return running < cpu_count()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return True
    return load + 1.0 <= cpu_count()
