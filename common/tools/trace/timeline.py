#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeline.py: what a server's threads did, from `strace -f -ttt -T`, as SVG.

  timeline.py [options] STRACE_LOG

  -o FILE.svg       the picture: one lane per thread, every system call a
                    bar from its entry to its exit, coloured by kind; the
                    whole run on top, a few milliseconds of it zoomed below
  --calls FILE      every call parsed, one per line, tab-separated ('-': stdout):
                    tid comm start duration name kind fd return detail
  --threads FILE    lines "EPOCH_SECONDS TID CPU_TICKS COMM" sampled from
                    /proc/PID/task while the server ran: names threads, and
                    shows the ones strace cannot see (io_uring's kernel
                    threads) with their CPU use
  --marks FILE      lines "EPOCH_SECONDS TEXT": moments to draw (the first one
                    is time 0 of the picture)
  --title TEXT      the picture's title; --note TEXT: a line under it (repeat)
  --zoom-ms MS      the zoomed panel's width (default 2.5)
  --main PID        the server's process, whose lane comes first (default:
                    the thread of the log's first call)
  --only-sampled    a lane only for the threads --threads lists (under Wine:
                    the server's and the wineserver's, not Wine's services)

strace_log.py, beside it, reads the log (its head says which lines); a call
still unfinished at the end of the log is drawn to the end. Only the
standard library: the course runs it with Debian's python3.
"""
import argparse
import html
import os
import sys
import textwrap

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from strace_log import EVENT_WAITS, parse, write_calls  # noqa: E402

KINDS = [  # kind, colour, legend text
    ("wait", "#a6cde3", "wait: epoll_wait, poll, futex, nanosleep"),
    ("read", "#1b9e77", "read, recv"),
    ("write", "#e69f00", "write, send"),
    ("accept", "#7b3294", "accept"),
    ("uring", "#d7301f", "io_uring_enter"),
    ("other", "#8c8c8c", "other"),
]
COLOUR = {k: c for k, c, _ in KINDS}


# ---- the picture ------------------------------------------------------------

# 900 px: the width the book gives a picture, so that it is shown at its size
WIDTH, LEFT, RIGHT = 900, 192, 12
PLOT = WIDTH - LEFT - RIGHT
LANE = 24  # a lane of the whole run: a 13 px bar
LANE_ZOOM = 32  # a lane of the zoom: two rows of labels, then the bar
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


def wrap(text, size, width=WIDTH - 24):
    """TEXT in lines that fit WIDTH px at font SIZE (an average glyph is
    about 0.55 of the size in DejaVu Sans)."""
    return textwrap.wrap(text, max(20, int(width / (size * 0.55))))


def esc(text):
    return html.escape(str(text), quote=True)


def nice_step(span, most):
    step = 10 ** -6
    while span / step > most:
        for f in (2, 5, 10):
            if span / (step * f) <= most:
                return step * f
        step *= 10
    return step


def ms_text(value_s, step_s):
    ms = value_s * 1000
    step_ms = step_s * 1000
    digits = 0
    while digits < 3 and abs(round(step_ms, digits) - step_ms) > 1e-9:
        digits += 1
    return "%.*f" % (digits, ms)


class Svg:
    def __init__(self):
        self.parts = []

    def add(self, text):
        self.parts.append(text)

    def text(self, x, y, s, size=11, anchor="start", weight="normal", fill="#222", extra=""):
        self.add('<text x="%.1f" y="%.1f" font-size="%s" text-anchor="%s"%s fill="%s"%s>%s</text>'
                 % (x, y, size, anchor, ' font-weight="bold"' if weight == "bold" else "", fill,
                    extra, esc(s)))

    def rect(self, x, y, w, h, fill, title=None, extra=""):
        if title:
            self.add('<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"%s><title>%s'
                     '</title></rect>' % (x, y, w, h, fill, extra, esc(title)))
        else:
            self.add('<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"%s/>'
                     % (x, y, w, h, fill, extra))

    def line(self, x1, y1, x2, y2, stroke="#444", extra=""):
        self.add('<line x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="%s"%s/>'
                 % (x1, y1, x2, y2, stroke, extra))


def describe(c):
    dur_us = c.dur * 1e6
    ret = "?" if c.ret is None else str(c.ret)
    text = "%s(%s) = %s%s" % (c.name, c.fd if c.fd is not None else "", ret,
                              " " + c.err if c.err else "")
    if c.name == "io_uring_enter" and len(c.args) >= 4:
        text = "io_uring_enter(%s) = %s" % (", ".join(c.args[:4]), ret)
    if c.unfinished:
        return text + ", still in it when the trace ended"
    if dur_us >= 1000:
        return text + ", %.2f ms" % (dur_us / 1000)
    return text + ", %.0f \u00b5s" % dur_us


def lane_summary(calls):
    """What a lane did, in a few words: the descriptor its reads and writes
    went to (a connection's thread), or its most frequent call."""
    fds = {}
    for c in calls:
        if c.kind in ("read", "write") and c.fd is not None and c.fd > 2:
            fds[c.fd] = fds.get(c.fd, 0) + 1
    if fds:
        top = max(fds, key=fds.get)
        if fds[top] * 4 >= sum(fds.values()) * 3:
            return "%d calls, I/O on fd %d" % (len(calls), top)
        return "%d calls, I/O on %d fds" % (len(calls), len(fds))
    names = {}
    for c in calls:
        names[c.name] = names.get(c.name, 0) + 1
    top = max(names, key=names.get) if names else ""
    return "%d calls, mostly %s" % (len(calls), top) if top else "no calls"


def shares(calls, t0, t1, columns):
    """For each pixel column of [t0, t1], the time spent in each kind of call."""
    width = (t1 - t0) / columns
    cols = [dict() for _ in range(columns)]
    for c in calls:
        a, b = max(c.start, t0), min(c.end, t1)
        if b < a:
            continue
        i = min(int((a - t0) / width), columns - 1)
        while True:
            lo, hi = t0 + i * width, t0 + (i + 1) * width
            part = min(b, hi) - max(a, lo)
            # a call too short to measure still counts as seen
            cols[i][c.kind] = cols[i].get(c.kind, 0.0) + max(part, 1e-9)
            if b <= hi or i == columns - 1:
                break
            i += 1
    return cols


class Panel:
    """One panel: lanes over a span of time, and its time axis."""

    def __init__(self, svg, t0, t1, origin, lane):
        self.svg, self.t0, self.t1, self.origin, self.lane = svg, t0, t1, origin, lane
        self.scale = PLOT / (t1 - t0)

    def x(self, t):
        return LEFT + (min(max(t, self.t0), self.t1) - self.t0) * self.scale

    def marks(self, y, marks):
        """The moments' labels, staggered over up to three rows, each ending
        before the right edge; returns the y below them."""
        rows_end, placed = [-1e9, -1e9, -1e9], []
        for t, text in marks:
            if not self.t0 <= t <= self.t1:
                continue
            x, w = self.x(t), 5.6 * len(text) + 4
            right = x + w <= LEFT + PLOT
            x0 = x + 2 if right else x - 2 - w
            row = next((i for i, e in enumerate(rows_end) if e < x0), None)
            if row is None:
                continue
            rows_end[row] = x0 + w + 4
            placed.append((x + 2 if right else x - 2, row, text, "start" if right else "end"))
        for x, row, text, anchor in placed:
            self.svg.text(x, y + 10 + 12 * row, text, size=10, anchor=anchor, fill="#7a0000")
        return y + 12 * (1 + max([p[1] for p in placed], default=-1)) + 4

    def lane_frame(self, i, y, tid, comm, main, sub):
        ly = y + i * self.lane
        if i % 2 == 0:
            self.svg.rect(LEFT, ly, PLOT, self.lane, "#f2f2f2")
        self.svg.text(LEFT - 8, ly + self.lane - 13, "%s %d%s" % (comm, tid, " (main)" if main
                                                                    else ""),
                      size=10.5, anchor="end")
        self.svg.text(LEFT - 8, ly + self.lane - 3, sub, size=9, anchor="end", fill="#555")
        return ly

    def summary_lane(self, ly, calls):
        """The whole run: a pixel column is too wide for one call, so its
        coloured height is the share of its time in each kind of call."""
        cols = shares(calls, self.t0, self.t1, PLOT)
        base, full = ly + self.lane - 2, self.lane - 11
        runs = []  # [x0, x1, stack]: equal neighbouring columns merged
        for i, col in enumerate(cols):
            if not col:
                continue
            total = self.t1 - self.t0
            stack, used = [], 0
            for kind, _, _ in KINDS:
                if kind in col:
                    h = max(2, round(col[kind] / (total / PLOT) * full))
                    h = min(h, full - used)
                    if h > 0:
                        stack.append((kind, h))
                        used += h
            stack = tuple(stack)
            if runs and runs[-1][1] == i and runs[-1][2] == stack:
                runs[-1][1] = i + 1
            else:
                runs.append([i, i + 1, stack])
        # one path per kind: thousands of small rectangles, written short
        paths = {}
        for x0, x1, stack in runs:
            y = base
            for kind, h in stack:
                y -= h
                paths.setdefault(kind, []).append("M%d %sh%dv%dh%dz" % (
                    LEFT + x0, ("%.1f" % y).rstrip("0").rstrip("."), x1 - x0, h, x0 - x1))
        for kind, _, _ in KINDS:
            if kind in paths:
                self.svg.add('<path fill="%s" d="%s"/>' % (COLOUR[kind], "".join(paths[kind])))

    def detailed_lane(self, ly, calls, sqpoll):
        bar_h = 11
        bar_y = ly + self.lane - 2 - bar_h
        for c in sorted(calls, key=lambda c: (c.kind != "wait", c.start)):
            x0, x1 = self.x(c.start), self.x(c.end)
            self.svg.rect(x0, bar_y, max(x1 - x0, 1.0), bar_h, COLOUR[c.kind], describe(c))
        # labels on two rows, the lower one first; one that fits on neither
        # is left out (the bar's tooltip still has it)
        ends = [-1e9, -1e9]
        for c in calls:
            lab = c.label(sqpoll)
            if not lab:
                continue
            x, w = max(self.x(c.start), LEFT), 4.9 * len(lab)
            if x + w > LEFT + PLOT + RIGHT:
                continue
            row = 1 if x >= ends[1] + 3 else 0 if x >= ends[0] + 3 else None
            if row is None:
                continue
            self.svg.text(x, bar_y - 2 - 9 * (1 - row), lab, size=8.5,
                          fill="#a01c0c" if c.kind == "uring" else "#1f5f8b")
            ends[row] = x + w

    def cpu_lane(self, ly, samples):
        """A thread strace cannot see: its CPU use between two samples of
        /proc (ticks of 10 ms), as a share of that time."""
        base, full = ly + self.lane - 2, self.lane - 11
        for (ta, ka), (tb, kb) in zip(samples, samples[1:]):
            if tb <= ta or kb <= ka or tb < self.t0 or ta > self.t1:
                continue
            h = min(1.0, (kb - ka) * 0.01 / (tb - ta)) * full
            x0, x1 = self.x(ta), self.x(tb)
            self.svg.rect(x0, base - h, max(x1 - x0, 1.0), h, "#555555",
                          "%d ms of CPU in these %.0f ms" % ((kb - ka) * 10, (tb - ta) * 1000))

    def axis(self, y):
        self.svg.line(LEFT, y, LEFT + PLOT, y)
        step = nice_step(self.t1 - self.t0, 10)
        k = int((self.t0 - self.origin) / step)
        while self.origin + k * step <= self.t1 + 1e-12:
            t = self.origin + k * step
            if t >= self.t0 - 1e-12:
                self.svg.line(self.x(t), y, self.x(t), y + 4)
                self.svg.text(self.x(t), y + 15, ms_text(k * step, step), size=10,
                              anchor="middle")
            k += 1
        self.svg.text(LEFT + PLOT, y + 28, "ms since the server said \u201clistening\u201d",
                      size=10, anchor="end", fill="#555")


def draw_panel(svg, y, lanes, t0, t1, origin, title, detailed, marks, sqpoll, foot=""):
    """One panel from t0 to t1 (epoch seconds); returns (the y below it, the
    y of its first lane)."""
    p = Panel(svg, t0, t1, origin, LANE_ZOOM if detailed else LANE)
    svg.text(LEFT, y + 12, title, size=12, weight="bold")
    y += 20
    top = y
    y = p.marks(y, marks)
    lanes_top = y
    for i, (tid, comm, calls, main, note) in enumerate(lanes):
        in_view = [] if note else [c for c in calls if c.end >= t0 and c.start <= t1]
        if note:
            ly = p.lane_frame(i, y, tid, comm, main, "kernel thread, not traced")
            if detailed:
                svg.text(LEFT + 6, ly + p.lane - 8, note, size=10, fill="#222",
                         extra=' font-style="italic"')
            else:
                p.cpu_lane(ly, calls)
        elif detailed:
            ly = p.lane_frame(i, y, tid, comm, main,
                              lane_summary(in_view) if in_view else "no call in these ms")
            p.detailed_lane(ly, in_view, sqpoll)
        else:
            ly = p.lane_frame(i, y, tid, comm, main, lane_summary(in_view))
            p.summary_lane(ly, in_view)
    y += len(lanes) * p.lane
    for t, _ in marks:  # the moments, as dashed lines over the lanes
        if t0 <= t <= t1:
            svg.line(p.x(t), top, p.x(t), y, "#7a0000",
                     ' stroke-dasharray="3,3" stroke-width="0.8"')
    p.axis(y)
    if foot:
        svg.text(LEFT, y + 28, foot, size=9.5, fill="#555")
    return y + 34, lanes_top, p


def legend(svg, y, calls, sqpoll, pixel_ms, unseen):
    x = 12
    for kind, colour, text in KINDS:
        w = 18 + 6.0 * len(text) + 16
        if x + w > WIDTH:
            x, y = 12, y + 16
        svg.rect(x, y - 9, 14, 10, colour)
        svg.text(x + 18, y, text, size=10.5)
        x += w
    y += 16
    lines = ["Whole run: each pixel column is %.2f ms, too wide for one call; its coloured height "
             "is the share of that time the thread spent in each kind of call (full: in calls all "
             "along, i.e. blocked)." % pixel_ms,
             "Zoom: a bar is one system call, from entry to exit (hover for the call); a long "
             "bar is a thread blocked in it."]
    names = {c.name for c in calls}
    if names & EVENT_WAITS:
        lines[-1] += " The number above epoll_wait or poll: the events it returned."
    if "io_uring_enter" in names and sqpoll:
        lines.append("SQPOLL: the kernel's polling thread submits, with no system call. The "
                     "io_uring_enter calls left only wait: \u2265W above one means it slept until "
                     "at least W completions were ready (IORING_ENTER_GETEVENTS, min_complete); "
                     "'wake' means it woke the polling thread, asleep after its idle time. The "
                     "completions are read from the ring in user space, unseen.")
    elif "io_uring_enter" in names:
        lines.append("Above io_uring_enter, S/\u2265W: it submitted S operations (its return "
                     "value) and slept until at least W completions were ready "
                     "(IORING_ENTER_GETEVENTS, min_complete). How many completions it then "
                     "reaped, the server reads from the ring in its own memory: strace cannot "
                     "see that.")
    if unseen:
        lines.append("Grey, in the lane of a thread strace cannot see: its CPU use, sampled from "
                     "/proc/PID/task every 20 ms (in ticks of 10 ms).")
    lines.append("Under strace every traced call stops the thread twice, so calls look longer "
                 "than they are: trust the order and the shape, not the microseconds.")
    for n in lines:
        for part in wrap(n, 10):
            svg.text(12, y, part, size=10, fill="#333")
            y += 14
    return y


def render(calls, threads, marks, title, notes, zoom_ms, out, only_sampled=False, main=None):
    origin = marks[0][0] if marks else calls[0].start
    t_end = max([c.end for c in calls if not c.unfinished] + [m for m, _ in marks] + [origin])
    t_end = max(t_end, origin + 0.001)
    for c in calls:
        if c.unfinished:
            c.dur = max(t_end - c.start, 0.0)
    shown = [c for c in calls if c.end >= origin]
    before = len(calls) - len(shown)
    sqpoll = any(c.name == "io_uring_setup" and "IORING_SETUP_SQPOLL" in " ".join(c.args)
                 for c in calls)

    # lanes: every traced thread with a call in the run, then the threads
    # strace could not see (no call at all, but /proc listed them)
    order, by_tid, comm_of, ticks, samples = [], {}, {}, {}, {}
    for when, tid, t, comm in threads:
        comm_of[tid] = comm
        ticks[tid] = max(t, ticks.get(tid, 0))
        samples.setdefault(tid, []).append((when, t))
    for c in shown:
        if c.tid not in by_tid:
            by_tid[c.tid] = []
            order.append(c.tid)
        by_tid[c.tid].append(c)
        if c.comm:
            comm_of.setdefault(c.tid, c.comm)
    main_tid = main if main is not None else calls[0].tid
    if only_sampled:  # the server's threads and the wineserver's, not Wine's helpers
        order = [tid for tid in order if tid in ticks]
    order.sort(key=lambda tid: tid != main_tid)  # the main thread first
    lanes = [(tid, comm_of.get(tid, "?"), by_tid[tid], tid == main_tid, None) for tid in order]
    traced = {c.tid for c in calls}
    for tid in sorted(ticks):
        if tid in traced:
            continue
        comm = comm_of[tid]
        cpu = "%d ms of CPU" % (ticks[tid] * 10)
        if comm.startswith("iou-sqp"):
            note = ("io_uring's polling thread: it submits for the server, in the kernel, "
                    "and strace cannot see it (%s)" % cpu)
        elif comm.startswith("iou-wrk"):
            note = "an io_uring worker, in the kernel: strace cannot see it (%s)" % cpu
        else:
            note = "no system call traced (%s)" % cpu
        lanes.append((tid, comm, samples[tid], False, note))

    # the zoom: zoom_ms around the middle of the calls made while the load ran
    busy = sorted(c.start for c in shown if c.kind != "wait")
    load = [t for t, text in marks if text.startswith("load")]
    inside = [t for t in busy if len(load) >= 2 and load[0] <= t <= load[1]]
    if inside:
        mid = inside[len(inside) // 2]
    elif len(load) >= 2:
        mid = (load[0] + load[1]) / 2
    else:
        mid = busy[len(busy) // 2] if busy else (origin + t_end) / 2
    z0, z1 = mid - zoom_ms / 2000, mid + zoom_ms / 2000

    svg = Svg()
    y = 22
    for part in wrap(title, 15 * 1.08):  # bold
        svg.text(12, y, part, size=15, weight="bold")
        y += 19
    y += 0
    for n in notes:
        for part in wrap(n, 10.5):
            svg.text(12, y, part, size=10.5, fill="#333")
            y += 15
    y = legend(svg, y + 6, shown, sqpoll, (t_end - origin) * 1000 / PLOT,
               any(lane[4] for lane in lanes)) + 8
    foot = ("%d calls of start-up, before time 0, are not drawn" % before) if before else ""
    y, top1, p1 = draw_panel(svg, y, lanes, origin, t_end, origin,
                             "The whole run: %.0f ms (the box is the zoom below)"
                             % ((t_end - origin) * 1000), False, marks, sqpoll, foot)
    bottom1 = y - 34
    y += 10
    n_zoom = sum(1 for c in shown if c.end >= z0 and c.start <= z1)
    y, top2, _ = draw_panel(svg, y, lanes, z0, z1, origin,
                            "Zoom: %.1f ms in the middle of the load, %d calls" % (zoom_ms, n_zoom),
                            True, [], sqpoll)
    # the box in the whole run, and lines from it to the zoom
    bx0, bx1 = p1.x(z0), max(p1.x(z1), p1.x(z0) + 2)
    svg.rect(bx0 - 1, top1 - 2, bx1 - bx0 + 2, bottom1 - top1 + 4, "none", None,
             ' stroke="#b8860b" stroke-width="1.5"')
    for xa, xb in ((bx0 - 1, LEFT), (bx1 + 1, LEFT + PLOT)):
        svg.line(xa, bottom1 + 2, xb, top2, "#b8860b", ' stroke-width="0.8" stroke-dasharray="2,3"')
    height = y + 6
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write('<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" '
              'viewBox="0 0 %d %d" font-family="%s">\n' % (WIDTH, height, WIDTH, height, FONT))
    out.write("<title>%s</title>\n" % esc(title))
    out.write('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>\n' % (WIDTH, height))
    out.write("\n".join(svg.parts))
    out.write("\n</svg>\n")


def read_threads(path):
    rows = []
    if not path:
        return rows
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
                try:
                    rows.append((float(parts[0]), int(parts[1]), int(parts[2]), parts[3]))
                except ValueError:
                    pass
    return rows


def read_marks(path):
    marks = []
    if not path:
        return marks
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 1)
            if len(parts) == 2:
                try:
                    marks.append((float(parts[0]), parts[1]))
                except ValueError:
                    pass
    return marks


def main():
    ap = argparse.ArgumentParser(description="Draw an strace -f -ttt -T log as a timeline.")
    ap.add_argument("log")
    ap.add_argument("-o", dest="svg")
    ap.add_argument("--calls")
    ap.add_argument("--threads")
    ap.add_argument("--marks")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--zoom-ms", type=float, default=2.5)
    ap.add_argument("--only-sampled", action="store_true")
    ap.add_argument("--main", type=int, help="the server's pid (default: the first thread)")
    a = ap.parse_args()
    if a.zoom_ms <= 0:
        ap.error("--zoom-ms must be more than 0")
    try:
        with open(a.log, encoding="utf-8", errors="replace") as f:
            calls = parse(f)
        threads, marks = read_threads(a.threads), read_marks(a.marks)
    except OSError as e:
        print("timeline.py: %s: %s" % (e.filename, e.strerror), file=sys.stderr)
        return 1
    if not calls:
        print("timeline.py: %s: no system call found (is it strace -f -ttt -T output?)" % a.log,
              file=sys.stderr)
        return 1
    # strace -Y keeps the name a thread had when it first saw it (a .NET
    # pool thread is born with its creator's); /proc has the one it took
    named = {tid: comm for _, tid, _, comm in threads}
    for c in calls:
        c.comm = named.get(c.tid, c.comm)
    if a.calls:
        if a.calls == "-":
            write_calls(calls, sys.stdout)
        else:
            with open(a.calls, "w", encoding="utf-8") as f:
                write_calls(calls, f)
    if a.svg:
        with open(a.svg + ".tmp", "w", encoding="utf-8") as f:
            render(calls, threads, marks, a.title or a.log, a.note, a.zoom_ms, f,
                   a.only_sampled, a.main)
        os.replace(a.svg + ".tmp", a.svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
