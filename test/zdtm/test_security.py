"""criu against a hostile environment: links planted in a directory others
can write to, images crafted to put control bytes into its messages, a user
without the privileges criu needs, and images corrupted on disk. In each
case the target outside stays untouched, the task comes out as it was, and
criu says in one line what is wrong."""
from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import pytest

import buildpaths
import zdtm
from test_errors import check_clean_error

sys.path.insert(0, str(buildpaths.CRIT.parent))
import crit  # noqa: E402

pytestmark = pytest.mark.usefixtures("need_criu")

SECRET = "secret contents\n"


def run_criu(r: zdtm.Run, args: list[str], prefix: Optional[list[str]] = None,
             umask: Optional[int] = None, log: Optional[Path] = None) -> zdtm.CriuResult:
    """criu ARGS, run through PREFIX (setpriv ...) and/or with a umask."""
    r.ncriu += 1
    cmd = (prefix or []) + [zdtm.CRIU] + args
    outp = r.dir / f"criu{r.ncriu}.stdout"
    errp = r.dir / f"criu{r.ncriu}.stderr"
    pre = (lambda: os.umask(umask)) if umask is not None else None  # noqa: E731
    with open(outp, "wb") as o, open(errp, "wb") as e:
        try:
            p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                               preexec_fn=pre, timeout=zdtm.CRIU_TIMEOUT)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = -999
    res = zdtm.CriuResult(cmd, rc, outp.read_text(errors="replace"),
                          errp.read_text(errors="replace"), log)
    if rc == -999:
        r.fail("criu did not finish in time", res)
    r.note(f"criu {args[0]} -> {rc}")
    return res


def shared_dir(r: zdtm.Run, name: str) -> Path:
    """A directory anyone may write to, as /tmp/shared would be."""
    d = r.dir / name
    d.mkdir()
    os.chmod(d, 0o777)
    return d


def victim(r: zdtm.Run, name: str = "victim") -> Path:
    """A file of someone else's that a planted link points at."""
    v = r.dir / name
    v.write_text(SECRET)
    os.chmod(v, 0o644)
    return v


def check_victim(r: zdtm.Run, v: Path, what: str, *res: zdtm.CriuResult) -> None:
    st = v.stat()
    if v.read_bytes() != SECRET.encode() or stat.S_IMODE(st.st_mode) != 0o644:
        r.fail(f"{what}: criu wrote through the planted link: {v} now has mode "
               f"{stat.S_IMODE(st.st_mode):o} and {v.read_bytes()[:60]!r}", *res)


def check_own_file(r: zdtm.Run, p: Path, what: str, *res: zdtm.CriuResult) -> None:
    st = p.lstat()
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or stat.S_IMODE(st.st_mode) != 0o600:
        r.fail(f"{what}: {p.name} is not a file of criu's own, 0600 (mode "
               f"{stat.S_IMODE(st.st_mode):o}, {st.st_nlink} links)", *res)


def refused(r: zdtm.Run, res: zdtm.CriuResult, what: str,
            words: tuple[str, ...] = ()) -> str:
    """check_clean_error, and a task that a restore which should have been
    refused brought back is ours to kill on the way out."""
    if res.returncode == 0 and "restore" in res.args:
        r.alive = r.ours = True
    return check_clean_error(r, res, what, words)


def warnings(res: zdtm.CriuResult) -> list[str]:
    return [line for line in res.stderr.splitlines() if line.startswith("Warning")]


# ---------------------------------------------------------- modes

@pytest.mark.parametrize("umask", [0o022, 0o277], ids=["umask022", "umask277"])
def test_image_modes(umask: int) -> None:
    """The images directory that criu creates is 0700 and every file it
    writes (images, page stores, the log) 0600, whatever the umask; an
    existing directory others can write to gets one warning, on stderr and
    in the log, and keeps its mode (it is the user's)."""
    with zdtm.Run("file_shared", f"modes-{umask:o}") as r:
        r.start()
        snap = r.snapshot()
        img = r.dir / "img"         # criu makes it
        res = run_criu(r, r.dump_cmd(img, ["--leave-running"]), umask=umask,
                       log=img / "dump.log")
        if res.returncode != 0:
            r.fail("criu dump failed", res)
        mode = stat.S_IMODE(img.stat().st_mode)
        if mode != 0o700:
            r.fail(f"criu created the images directory {mode:o}, not 0700", res)
        files = list(img.iterdir())
        if not any(p.name.startswith("pages-") for p in files) or \
                not (img / "dump.log").exists():
            r.fail("the dump wrote no page store or no log", res)
        bad = [f"{p.name}: {stat.S_IMODE(p.lstat().st_mode):o}" for p in files
               if not stat.S_ISREG(p.lstat().st_mode) or stat.S_IMODE(p.lstat().st_mode) != 0o600]
        if bad:
            r.fail("files not created 0600: " + ", ".join(bad), res)
        if warnings(res):
            r.fail(f"warned about a directory of criu's own: {warnings(res)}", res)

        shared = shared_dir(r, "shared")
        res = run_criu(r, r.dump_cmd(shared, ["--leave-running"]), umask=umask,
                       log=shared / "dump.log")
        if res.returncode != 0:
            r.fail("criu dump into a 0777 directory failed", res)
        warn = warnings(res)
        if len(warn) != 1 or str(shared) not in warn[0] or "0777" not in warn[0]:
            r.fail(f"expected one warning naming {shared} (0777), got {warn}", res)
        if "writable by others" not in (shared / "dump.log").read_text():
            r.fail("the warning is not in the log", res)
        if stat.S_IMODE(shared.stat().st_mode) != 0o777:
            r.fail("criu changed the mode of an existing directory", res)
        r.check_running("after the dumps", snap)
        r.finish()


# ------------------------------------------------------- planted links

# name planted in the images directory -> how (symlink or hard link)
PLANTED = {
    "image": ("files.img", "symlink"),
    "store": ("pages-{pid}.img", "hardlink"),
    "log": ("dump.log", "symlink"),
}


@pytest.mark.parametrize("what", list(PLANTED))
def test_dump_planted_link(what: str) -> None:
    """A root dump into a directory others can write to, where one of the
    names it writes was planted as a link to someone else's file: the file
    is untouched (contents and mode), criu writes a file of its own, warns
    once about the directory, and the checkpoint restores."""
    with zdtm.Run("file_shared", f"plant-{what}") as r:
        r.start()
        snap = r.snapshot()
        img = shared_dir(r, "shared")
        v = victim(r)
        name, how = PLANTED[what]
        link = img / name.format(pid=r.pid)
        if how == "symlink":
            link.symlink_to(v)
        else:
            os.link(v, link)
        res = r.dump(img)
        if res.returncode != 0:
            r.fail("criu dump failed", res)
        r.gone_after_dump(res)
        check_victim(r, v, f"dump over a planted {how} {name}", res)
        check_own_file(r, link, f"dump over a planted {how}", res)
        warn = warnings(res)
        if len(warn) != 1 or str(img) not in warn[0] or "0777" not in warn[0]:
            r.fail(f"expected one warning naming the directory {img} (0777), got {warn}", res)
        r.restore_ok(img)
        r.check_running("after restore", snap)
        r.finish()


def test_log_to_a_device() -> None:
    """-o and --pidfile naming a character device (as people write -o
    /dev/null): criu writes to the device and leaves the node as it was; it
    used to remove it and put a file of its own there (/dev/null broken)."""
    with zdtm.Run("file_shared", "log-to-device") as r:
        r.start()
        snap = r.snapshot()
        node = r.dir / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.chmod(node, 0o666)
        img = r.imgdir("img")
        res = r.criu(["dump", "-t", str(r.pid), "-D", str(img), "-o", str(node),
                      "--pidfile", str(node), "--leave-running"])
        if res.returncode != 0:
            r.fail("criu dump with its log on a device failed", res)
        st = node.lstat()
        if not stat.S_ISCHR(st.st_mode) or st.st_rdev != os.makedev(1, 3) or \
                stat.S_IMODE(st.st_mode) != 0o666:
            r.fail(f"the device node was replaced: mode {st.st_mode:o}, rdev {st.st_rdev:#x}",
                   res)
        r.check_running("after the dump", snap)
        r.finish()


def test_restore_planted_links() -> None:
    """At restore, the log and a pidfile (in the images directory, and given
    as an absolute path in another directory others can write to) were
    planted as links: criu writes files of its own; the targets stay."""
    with zdtm.Run("mem_anon", "plant-restore") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img)
        os.chmod(img, 0o777)
        other = shared_dir(r, "elsewhere")
        targets = {img / "restore.log": victim(r, "v-log"),
                   img / "restore.pid": victim(r, "v-pid"),
                   other / "abs.pid": victim(r, "v-abs")}
        for link, v in targets.items():
            link.symlink_to(v)
        res, pidfile = r.restore(img)
        if res.returncode != 0:
            r.fail("criu restore failed", res)
        r.alive = r.ours = True
        for link, v in targets.items():
            check_victim(r, v, f"restore over a planted {link.name}", res)
        check_own_file(r, img / "restore.log", "restore log", res)
        check_own_file(r, pidfile, "restore pidfile", res)
        if int(pidfile.read_text()) != r.pid:
            r.fail(f"pidfile holds {pidfile.read_text()!r}, not {r.pid}", res)
        r.check_running("after restore", snap)
        # the absolute pidfile: a second restore of the same images
        r.kill()
        res = run_criu(r, ["restore", "-D", str(img), "-d", "--pidfile",
                           str(other / "abs.pid")])
        if res.returncode != 0:
            r.fail("criu restore with an absolute --pidfile failed", res)
        r.alive = r.ours = True
        check_victim(r, targets[other / "abs.pid"], "restore over a planted absolute pidfile",
                     res)
        check_own_file(r, other / "abs.pid", "absolute pidfile", res)
        r.check_running("after the second restore", snap)
        r.finish()


def test_restore_symlinked_image() -> None:
    """An image replaced by a symlink (to a good copy of itself) is refused
    with one line naming it; nothing is left behind."""
    with zdtm.Run("mem_anon", "symlinked-image") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        fs = img / f"fs-{r.pid}.img"
        shutil.copy(fs, r.dir / "fs-copy.img")
        fs.unlink()
        fs.symlink_to(r.dir / "fs-copy.img")
        res, _ = r.restore(img)
        refused(r, res, "restore with a symlinked image", ("symbolic link",))
        if fs.name not in zdtm.error_lines(res.stderr)[0]:
            r.fail("the Error line does not name the image", res)
        if zdtm.pid_exists(r.pid):
            r.fail(f"pid {r.pid} exists after the refused restore", res)
        r.ours = False


# ------------------------------------------------- control bytes in text

def raw_controls(text: str) -> list[str]:
    return sorted({f"{ord(c):#04x}" for c in text if (ord(c) < 0x20 and c != "\n")
                   or ord(c) == 0x7f})


def check_escaped(r: zdtm.Run, res: zdtm.CriuResult, log: Path, what: str) -> None:
    for where, text in (("stderr", res.stderr), (log.name, log.read_text(errors="replace"))):
        bad = raw_controls(text)
        if bad:
            r.fail(f"{what}: raw control bytes {bad} in {where}", res)
        if "\\x1b" not in text or "\\x07" not in text or "\\x0d" not in text:
            r.fail(f"{what}: {where} does not show the bytes escaped (\\x1b, \\x07, \\x0d)",
                   res)


EVIL = "/nonexistent/\x1b]0;owned\x07\x1b[31mred\r"


def test_escaped_image_path() -> None:
    """A crafted fs image whose cwd holds ESC, BEL and CR (a terminal title
    and colour sequence, a carriage return): the restore fails, and neither
    stderr nor the log carries a raw control byte."""
    with zdtm.Run("mem_anon", "escape-restore") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        fs = img / f"fs-{r.pid}.img"
        doc = crit.read_image(fs, full_bytes=True)
        doc["entry"]["cwd"] = EVIL
        fs.write_bytes(crit.encode_image(doc))
        res, _ = r.restore(img)
        refused(r, res, "restore into a crafted cwd")
        check_escaped(r, res, img / "restore.log", "restore")
        if zdtm.pid_exists(r.pid):
            r.fail(f"pid {r.pid} exists after the failed restore", res)
        r.ours = False


def test_escaped_proc_path() -> None:
    """At dump, text from /proc: a task holding an open deleted file whose
    name has ESC, BEL and CR (over --ghost-limit) is refused, its path
    escaped in the one line."""
    with zdtm.Run("mem_anon", "escape-dump") as r:
        name = r.dir / ("x\x1b[31m\x07\rdeleted")
        code = ("import os, sys, time\n"
                "f = open(sys.argv[1], 'w'); f.write('x' * 10); f.flush()\n"
                "os.unlink(sys.argv[1])\n"
                "open(sys.argv[2], 'w').write(str(os.getpid()))\n"
                "time.sleep(600)\n")
        ready = r.dir / "py.ready"
        p = subprocess.Popen([sys.executable, "-c", code, str(name), str(ready)],
                             start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 20
            while not ready.exists() or not ready.read_text():
                if time.monotonic() > deadline or p.poll() is not None:
                    r.fail("the python task did not get ready")
                time.sleep(0.01)
            img = r.imgdir("img")
            res = run_criu(r, ["dump", "-t", str(p.pid), "-D", str(img), "-o", "dump.log",
                               "-v4", "--ghost-limit", "1"], log=img / "dump.log")
            check_clean_error(r, res, "dump of a task with a deleted file", ("deleted",))
            check_escaped(r, res, img / "dump.log", "dump")
            if p.poll() is not None:
                r.fail("the refused dump killed the task", res)
        finally:
            p.kill()
            p.wait()


# ---------------------------------------------------------- privileges

def _need_setpriv() -> None:
    if not shutil.which("setpriv"):
        pytest.skip("no setpriv (util-linux) to run criu without privileges")
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")


AS_NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def without(*caps: str) -> list[str]:
    drop = ",".join("-" + c for c in caps)
    return ["setpriv", f"--inh-caps={drop}", f"--bounding-set={drop}"]


def nobody_dir(r: zdtm.Run) -> Path:
    """A directory of nobody's own (the session directory is root's, 0700)."""
    d = Path(tempfile.mkdtemp(prefix="criu-nobody.", dir="/tmp"))
    pw = pwd.getpwnam("nobody")
    os.chown(d, pw.pw_uid, pw.pw_gid)
    r.note(f"nobody's directory {d}")
    return d


RESTORE_CASES = {
    "nobody": (AS_NOBODY, ("needs root", "CAP_SYS_ADMIN")),
    "no-sys-admin": (without("sys_admin"), ("needs CAP_SYS_ADMIN",)),
}


@pytest.mark.parametrize("who", list(RESTORE_CASES))
def test_restore_unprivileged(who: str) -> None:
    """A restore by a user who may not: one line saying what is missing
    (root, or the capability), and nothing created: no task, no log."""
    _need_setpriv()
    prefix, words = RESTORE_CASES[who]
    with zdtm.Run("mem_anon", f"restore-{who}") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        d = nobody_dir(r)
        try:
            mine = d / "img"
            shutil.copytree(img, mine)
            pw = pwd.getpwnam("nobody")
            for p in [mine] + list(mine.iterdir()):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            before = zdtm.hash_tree(mine)
            res = run_criu(r, ["restore", "-D", str(mine), "-d", "-o", "restore.log"],
                           prefix=prefix)
            line = refused(r, res, f"restore as {who}")
            if not all(w in line for w in words):
                r.fail(f"the Error line does not say {words}: {line!r}", res)
            if "time namespace" in line or "Operation not permitted" in line:
                r.fail(f"the Error line is the kernel's refusal, not what is missing: "
                       f"{line!r}", res)
            if zdtm.pid_exists(r.pid):
                r.fail(f"pid {r.pid} exists after the refused restore", res)
            if (mine / "restore.log").exists() or zdtm.hash_tree(mine) != before:
                r.fail("the refused restore created or changed files", res)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        r.ours = False


DUMP_CASES = {
    "nobody": (AS_NOBODY, ("needs root", "CAP_SYS_PTRACE", "CAP_CHECKPOINT_RESTORE")),
    "no-ptrace": (without("sys_ptrace"), ("needs CAP_SYS_PTRACE",)),
    "no-cr": (without("sys_admin", "checkpoint_restore"),
              ("needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN",)),
}


@pytest.mark.parametrize("who", list(DUMP_CASES))
def test_dump_unprivileged(who: str) -> None:
    """A dump of root's task by a user who may not: one line saying what is
    missing; the task runs on untouched and no images directory is made."""
    _need_setpriv()
    prefix, words = DUMP_CASES[who]
    with zdtm.Run("mem_anon", f"dump-{who}") as r:
        r.start()
        snap = r.snapshot()
        d = nobody_dir(r)
        try:
            img = d / "img"
            res = run_criu(r, ["dump", "-t", str(r.pid), "-D", str(img), "-o", "dump.log"],
                           prefix=prefix)
            line = check_clean_error(r, res, f"dump as {who}", pid=0)
            if not all(w in line for w in words):
                r.fail(f"the Error line does not say {words}: {line!r}", res)
            if img.exists():
                r.fail("the refused dump created its images directory", res)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        r.check_running(f"after the refused dump ({who})", snap)
        r.finish()


# ----------------------------------------------------------- checksums

def flip(path: Path, off: int) -> None:
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x01]))


def test_checksum_pages() -> None:
    """One flipped bit in the middle of the page store: restore refuses it
    before any task runs, naming the file and the chunk; the images stay as
    they were. With --skip-checksum the same images restore (the memory is
    then what the file says)."""
    with zdtm.Run("mem_anon", "checksum", extra="mem=8") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        pages = img / f"pages-{r.pid}.img"
        size = pages.stat().st_size
        off = size // 2 + 123
        flip(pages, off)
        before = zdtm.hash_tree(img)
        res, pidfile = r.restore(img)
        line = refused(r, res, "restore of a flipped page", ("corrupted",))
        chunk = off // (1 << 20)
        if pages.name not in line or f"chunk {chunk} " not in line:
            r.fail(f"the Error line names neither {pages.name} nor chunk {chunk}: {line!r}",
                   res)
        if zdtm.pid_exists(r.pid) or pidfile.exists():
            r.fail(f"pid {r.pid} exists (or a pidfile) after the refused restore", res)
        after = zdtm.hash_tree(img)
        for f, h in before.items():
            if not f.endswith(".log") and after.get(f) != h:
                r.fail(f"the refused restore changed {f}", res)
        r.restore_ok(img, ["--skip-checksum"])
        r.note("restored with --skip-checksum")
        r.kill()


def test_checksum_skipped_at_dump() -> None:
    """A dump with --skip-checksum: the inventory says its stores have no
    checksums, the restore warns once and restores."""
    with zdtm.Run("mem_anon", "no-checksum") as r:
        r.start()
        snap = r.snapshot()
        img = r.imgdir("img")
        r.dump_ok(img, ["--skip-checksum"])
        inv = crit.read_image(img / "inventory.img")["entry"]
        if inv.get("store_checksums") or inv.get("stores"):
            r.fail(f"--skip-checksum: the inventory has store checksums: {inv}")
        res, _ = r.restore(img)
        if res.returncode != 0:
            r.fail("criu restore failed", res)
        r.alive = r.ours = True
        log = (img / "restore.log").read_text()
        if "no checksums" not in log:
            r.fail("the restore did not warn that the stores have no checksums", res)
        r.check_running("after restore", snap)
        r.finish()


def test_old_format_refused() -> None:
    """Images of format version 1 (no checksums) are refused in one line
    that says so."""
    with zdtm.Run("mem_anon", "old-format") as r:
        r.start()
        img = r.imgdir("img")
        r.dump_ok(img)
        inv = img / "inventory.img"
        data = inv.read_bytes()
        inv.write_bytes(data[:8] + data[12:])     # drop the checksum: a v1 frame
        res, _ = r.restore(img)
        refused(r, res, "restore of old images", ("format version 1",))
        r.ours = False
