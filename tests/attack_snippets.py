"""Source code that attack tests put into submitted files."""

from __future__ import annotations

FORK_EXEC = '''
def {name}(argv, wait=True):
    """Start a program with _posixsubprocess.fork_exec: no audit event, so no audit hook sees it."""
    import os
    import _posixsubprocess

    errread, errwrite = os.pipe()
    base = [argv, [os.fsencode(argv[0])], True, (), None, None, -1, -1, -1, -1, -1, -1, errread, errwrite, True, True]
    for tail in ([-1, None, None, None, -1, None, False], [-1, None, None, None, -1, None]):  # 3.11 and 3.12+
        try:
            pid = _posixsubprocess.fork_exec(*base, *tail)
            break
        except TypeError:
            continue
    os.close(errwrite)
    os.close(errread)
    if wait:
        os.waitpid(pid, 0)
    return pid
'''


def fork_exec(name: str = "spawn") -> str:
    """A function ``name(argv, wait=True) -> pid`` as source."""
    return FORK_EXEC.format(name=name)
