# SPDX-License-Identifier: MIT
"""strace_log.py: the system calls of an `strace -f -ttt -T` log, for timeline.py.

parse(lines) reads lines like those of `strace -f -ttt -T -Y` (-Y and -f
optional): "TID<comm> 1796412223.686335 read(6, ..., 65536) = 11 <0.000010>",
a call split by another thread's ("... <unfinished ...>", then "<... read
resumed>... = 11 <0.2>"), and skips "+++ exited" and "--- SIGTERM" lines. A
call still unfinished at the end of the log is marked so. write_calls()
prints them one a line, tab-separated: tid comm start duration name kind fd
return detail (the table timeline.py --calls writes).
"""
import re

WAITS = {"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect6",
         "futex", "futex_waitv", "nanosleep", "clock_nanosleep", "wait4", "waitid",
         "rt_sigtimedwait", "sched_yield", "pause"}
READS = {"read", "readv", "pread64", "preadv", "preadv2", "recv", "recvfrom", "recvmsg",
         "recvmmsg"}
WRITES = {"write", "writev", "pwrite64", "pwritev", "pwritev2", "send", "sendto", "sendmsg",
          "sendmmsg", "sendfile", "splice"}
# calls whose first argument is a descriptor (the "fd" of --calls)
FD_FIRST = {"accept", "accept4", "io_uring_enter", "io_uring_register", "epoll_wait",
            "epoll_pwait", "epoll_pwait2", "epoll_ctl", "close", "shutdown", "setsockopt",
            "getsockopt", "fcntl", "bind", "listen", "connect", "getsockname", "getpeername",
            "ioctl", "fstat", "dup", "dup2", "dup3"}
EVENT_WAITS = {"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select",
               "pselect6"}


def kind_of(name):
    if name in WAITS:
        return "wait"
    if name in READS:
        return "read"
    if name in WRITES:
        return "write"
    if name in ("accept", "accept4"):
        return "accept"
    if name == "io_uring_enter":
        return "uring"
    return "other"


HEAD = re.compile(r"^(?:\[pid\s+)?(\d+)(?:<(.*?)>)?\]?\s+(\d+\.\d+)\s+(.*)$")
HEAD_NOPID = re.compile(r"^(\d+\.\d+)\s+(.*)$")
START = re.compile(r"^([a-z_0-9]+)\((.*)$")
RESUMED = re.compile(r"^<\.\.\. ([a-z_0-9]+) resumed>(.*)$")
RESULT = re.compile(r"^(.*)\)\s+=\s+(.*?)(?:\s+<(\d+\.\d+|unavailable)>)?\s*$")


def split_args(text):
    """Top-level comma-separated arguments: commas inside (), [], {} or a
    string do not count."""
    args, depth, cur, quoted, esc = [], 0, [], False, False
    for ch in text:
        if quoted:
            cur.append(ch)
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


NUMBER = re.compile(r"^-?(?:0x[0-9a-fA-F]+|\d+)")


def to_int(text):
    """The number TEXT starts with (a return value may go on: "14079<comm>",
    "0x2 (flags O_RDWR)"), or None."""
    m = NUMBER.match(text or "")
    return int(m.group(0), 0) if m else None


class Call:
    """One system call: its thread, when it began (epoch seconds, as strace
    wrote it), how long it took, its arguments and what it returned."""

    def __init__(self, tid, comm, stamp, name, args):
        self.tid, self.comm, self.stamp, self.name = tid, comm, stamp, name
        self.start = float(stamp)
        self.kind = kind_of(name)
        self.args = split_args(args)
        self.dur, self.ret, self.err, self.unfinished = 0.0, None, "", False
        self.args_text = ""  # an unfinished call's arguments so far

    @property
    def end(self):
        return self.start + self.dur

    @property
    def fd(self):
        if self.args and (self.name in FD_FIRST or self.kind in ("read", "write")):
            return to_int(self.args[0])
        return None

    def finish(self, result, dur):
        words = result.split()
        self.ret = to_int(words[0]) if words else None
        if self.ret == -1 and len(words) > 1:
            self.err = words[1]
        self.dur = float(dur) if dur and dur != "unavailable" else 0.0

    def detail(self):
        """What the picture writes on the bar: for io_uring_enter what it
        submitted and what it waited for, for a readiness wait the events."""
        if self.name == "io_uring_enter" and len(self.args) >= 4:
            d = "to_submit=%s min_complete=%s flags=%s" % (self.args[1], self.args[2],
                                                          self.args[3])
            return d + (" error=" + self.err if self.err else "")
        if self.name in EVENT_WAITS and self.ret is not None and self.ret >= 0:
            return "events=%d" % self.ret
        return self.err

    def label(self, sqpoll=False):
        """The short label above the bar (see the legend)."""
        if self.name == "io_uring_enter" and len(self.args) >= 4 and self.ret is not None:
            if self.ret < 0:
                return self.err
            flags, wait = self.args[3], to_int(self.args[2])
            waits = "GETEVENTS" in flags and wait
            if sqpoll:  # the polling thread submits: the call only waits or wakes it
                text = "\u2265%d" % wait if waits else ""
            else:
                text = "%d" % self.ret
                if to_int(self.args[1]) not in (None, self.ret):
                    text += " of %s" % self.args[1]
                if waits:
                    text += "/\u2265%d" % wait
            if "SQ_WAKEUP" in flags:
                text += " wake"
            return text.strip()
        if self.name in EVENT_WAITS and self.ret is not None and self.ret >= 0:
            return "%d" % self.ret
        return ""


def parse(lines):
    """The calls of an strace log, in the order they started."""
    calls, pending = [], {}
    for raw in lines:
        line = raw.rstrip("\n")
        m = HEAD.match(line)
        if m:
            tid, comm, stamp, body = int(m.group(1)), m.group(2) or "", m.group(3), m.group(4)
        else:
            m = HEAD_NOPID.match(line)
            if not m:
                continue
            tid, comm, stamp, body = 0, "", m.group(1), m.group(2)
        if body.startswith("+++") or body.startswith("---"):
            continue
        r = RESUMED.match(body)
        if r:
            call = pending.pop(tid, None)
            if call is None or call.name != r.group(1):
                continue  # resumed from before the log began
            rest = r.group(2)
            res = RESULT.match(rest)
            if res:
                call.args = split_args(call.args_text + res.group(1))
                call.finish(res.group(2), res.group(3))
                call.unfinished = False
            continue
        s = START.match(body)
        if not s:
            continue
        name, rest = s.group(1), s.group(2)
        if rest.endswith("<unfinished ...>"):
            call = Call(tid, comm, stamp, name, "")
            call.args_text = rest[: -len("<unfinished ...>")].rstrip()
            call.unfinished = True
            pending[tid] = call
            calls.append(call)
            continue
        res = RESULT.match(rest)
        if not res:
            continue
        call = Call(tid, comm, stamp, name, res.group(1))
        call.finish(res.group(2), res.group(3))
        calls.append(call)
    for call in pending.values():  # never resumed: the trace ended first
        call.args = split_args(call.args_text)
    calls.sort(key=lambda c: c.start)
    return calls



def write_calls(calls, out):
    for c in calls:
        fd = c.fd if c.fd is not None else "-"
        ret = c.ret if c.ret is not None else "?"
        dur = "unfinished" if c.unfinished else "%.6f" % c.dur
        out.write("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" % (c.tid, c.comm or "-", c.stamp, dur,
                                                            c.name, c.kind, fd, ret,
                                                            c.detail() or "-"))
