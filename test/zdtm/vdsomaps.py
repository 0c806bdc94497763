"""What a vDSO redirect does to a task's /proc/PID/maps, for the runner.

A restore on a kernel whose vDSO differs from the dumped one (or with
CRIU_VDSO_REDIRECT=1) puts the kernel's [vvar], [vvar_vclock] and [vdso]
at a place of their own and the old [vdso] back, at its address, as an
anonymous r-xp area of redirects (Documentation/design.md, section 7).
criu logs one line per task that got one:

    Task 123: vDSO redirect 0x7f..-0x7f..: [vvar] 0x..-0x.. [vdso] 0x..-0x..

The runner accepts exactly that change of the maps, and only after such
a line: redirected() makes the expected maps from the snapshot."""
from __future__ import annotations

import re
from dataclasses import dataclass

LINE = re.compile(r"vDSO redirect 0x([0-9a-f]+)-0x([0-9a-f]+):((?: \[\w+\] 0x[0-9a-f]+-0x[0-9a-f]+)*)")
AREA = re.compile(r"(\[\w+\]) 0x([0-9a-f]+)-0x([0-9a-f]+)")
KERNEL_AREAS = ("[vvar]", "[vvar_vclock]", "[vdso]")
DEFAULT_PERMS = {"[vdso]": "r-xp"}


@dataclass
class Redirect:
    old_start: int
    old_end: int
    areas: list[tuple[str, int, int]]   # (name, start, end) of the kernel's, now


def parse_log(text: str) -> list[Redirect]:
    """The redirects a restore log reports."""
    out = []
    for m in LINE.finditer(text):
        areas = [(a.group(1), int(a.group(2), 16), int(a.group(3), 16))
                 for a in AREA.finditer(m.group(3))]
        out.append(Redirect(int(m.group(1), 16), int(m.group(2), 16), areas))
    return out


def _fields(line: str) -> list[str]:
    """start-end perms offset dev inode [path] of one line of read_maps()."""
    parts = line.split(maxsplit=5)
    return parts + [""] * (6 - len(parts))


def _span(line: str) -> tuple[int, int]:
    s, e = _fields(line)[0].split("-")
    return int(s, 16), int(e, 16)


def _line(start: int, end: int, perms: str, path: str) -> str:
    return f"{start:x}-{end:x} {perms} 00000000 00:00 0 {path}".rstrip()


def redirected(maps: list[str], r: Redirect) -> list[str]:
    """maps as the redirect @r leaves them, if its old [vdso] is the one in
    maps; maps as they are otherwise (the redirect was another task's)."""
    vdso = [m for m in maps if _fields(m)[5] == "[vdso]"]
    if len(vdso) != 1 or _span(vdso[0]) != (r.old_start, r.old_end):
        return maps
    perms = {_fields(m)[5]: _fields(m)[1] for m in maps if _fields(m)[5] in KERNEL_AREAS}
    out = [m for m in maps if _fields(m)[5] not in KERNEL_AREAS]
    out.append(_line(r.old_start, r.old_end, perms["[vdso]"], ""))
    for name, start, end in r.areas:
        out.append(_line(start, end, perms.get(name, DEFAULT_PERMS.get(name, "r--p")), name))
    return sorted(out, key=lambda m: _span(m)[0])


def apply(maps: list[str], redirects: list[Redirect]) -> list[str]:
    for r in redirects:
        maps = redirected(maps, r)
    return maps
