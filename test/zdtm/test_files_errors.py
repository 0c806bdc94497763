"""Open files criu refuses to dump: a TCP connection without
--tcp-established, a TCP listener with a connection not accepted yet
(without --skip-in-flight), a raw IP socket with a packet unread, a
unix socket
bound to a relative path or whose socket file was replaced, a connection not
accepted yet with data sent on it, file descriptors in flight (SCM_RIGHTS),
a socket pair whose peer is outside the tree, a netlink socket with
messages not read, a packet socket with a ring, an eBPF filter or a
frame unread or of type SOCK_PACKET, an epoll watching an fd the
task closed. criu must fail cleanly (non-zero exit, one
stderr line with "Error" that names the task and the object) and the task
must go on untouched and pass its own check (test_errors.py's contract).
A task holding a file lock without --file-locks is refused the same way."""
from __future__ import annotations

import pytest

import zdtm
from test_errors import check_refused_dump

pytestmark = pytest.mark.usefixtures("need_criu")

REFUSED = {
    # argument of static/files_refused -> words one of which the line must hold
    "tcp-established": ("--tcp-established",),
    "tcp-unaccepted": ("not accepted",),
    "raw-queued": ("waiting to be read",),
    "netlink-unread": ("not read yet",),
    "packet-ring": ("mapped in part", "part of a packet"),
    "packet-ebpf": ("ebpf filter",),
    "packet-unread": ("packets not read yet",),
    "packet-obsolete": ("sock_packet",),
    "unix-relative": ("relative path files_refused.sock",),
    "unix-replaced": ("replaced",),
    "unix-unaccepted-data": ("not accepted yet",),
    "unix-scm": ("scm_rights",),
    "unix-outside": ("outside the dumped tree",),
    "epoll-closed": ("closed",),
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_dump_refused_file(what):
    with zdtm.Run("files_refused", f"refused-{what}", args=[what]) as r:
        check_refused_dump(r, f"a task holding {what}", REFUSED[what])


LOCKS = {
    # program holding the locks -> the kernel's name of the kind the line names
    "file_locks_posix": "POSIX",
    "file_locks_ofd": "OFDLCK",
    "file_locks_flock": "FLOCK",
    "file_locks_lease": "LEASE",
}


@pytest.mark.parametrize("prog", list(LOCKS))
def test_dump_refused_lock(prog):
    """A task holding a file lock, dumped without --file-locks: refused
    with one line naming the task, the fd, the file, the kind of lock and
    the option; the task keeps its locks (its own check after SIGTERM)."""
    with zdtm.Run(prog, "refused-no-file-locks") as r:
        line = check_refused_dump(r, f"a task holding a {LOCKS[prog]} lock",
                                  ("--file-locks",))
        assert f"{LOCKS[prog]} " in line and f"{prog}." in line and "fd " in line, line
