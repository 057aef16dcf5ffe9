"""The bundle's program: PyInstaller freezes this as `parley` (packaging/parley.spec).

A frozen app has no `python -m`, yet Parley starts two helpers as `sys.executable -m MODULE`:
the llama.cpp engine's process and the library's folder watcher. In the bundle
`sys.executable` is this program, so it runs those two modules when asked as Python would,
and refuses any other; with no `-m` it is the desktop app (its own flags included).
"""

from __future__ import annotations

import runpy
import sys

HELPERS = ("server.models.engine_process", "server.library.watching")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "-m":
        name = sys.argv[2] if len(sys.argv) > 2 else ""
        if name not in HELPERS:
            print(f"parley: -m runs only {', '.join(HELPERS)} in the bundle", file=sys.stderr)
            return 2
        sys.argv = [sys.argv[0], *sys.argv[3:]]
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return 0
    from desktop.app import main as desktop_main

    return desktop_main()


if __name__ == "__main__":
    sys.exit(main())
