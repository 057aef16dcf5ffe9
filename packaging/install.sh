#!/bin/sh
# Puts this Parley bundle in the application menu, for the user who runs it:
#
#   ./install.sh               the desktop entry (its Exec is this bundle's `parley`), the
#                              icon (SVG and PNGs from 16 to 512 px) and the AppStream file,
#                              under $XDG_DATA_HOME (default ~/.local/share)
#   ./install.sh --uninstall   removes exactly those
#
# Parley keeps chats, settings and logs in the usual per-user folders, so this bundle and a
# pip-installed Parley share one history. Moving the folder later: run ./install.sh again.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in
    --uninstall) exec "$here/parley/parley" --uninstall-desktop-entry ;;
    "") exec "$here/parley/parley" --install-desktop-entry ;;
    *) echo "usage: $0 [--uninstall]" >&2; exit 2 ;;
esac
