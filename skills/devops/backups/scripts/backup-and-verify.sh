#!/usr/bin/env bash
# Makes a dated tar.gz of a folder, writes its SHA-256 beside it, then proves the archive restores:
# it unpacks into a fresh temporary folder and compares every file with the source. Only the
# temporary folder it made itself is removed afterwards. The source is never modified.
#
# usage: bash backup-and-verify.sh SOURCE_DIR DEST_DIR [NAME]
#   writes DEST_DIR/NAME-YYYYmmdd-HHMMSS.tar.gz and .sha256 (NAME defaults to the source's folder name)
# exit status: 0 archive written and restore matches; 1 restore differs; 2 usage or I/O error
set -eu
if [ $# -lt 2 ]; then
  echo "usage: bash backup-and-verify.sh SOURCE_DIR DEST_DIR [NAME]" >&2
  exit 2
fi
src=$(cd "$1" && pwd) || { echo "backup: no such folder: $1" >&2; exit 2; }
case "$2" in /*) wanted="$2" ;; *) wanted="$PWD/$2" ;; esac
case "$wanted/" in "$src"/*) echo "backup: DEST_DIR must not be inside SOURCE_DIR" >&2; exit 2 ;; esac
mkdir -p "$2"
dest=$(cd "$2" && pwd)
case "$dest/" in "$src"/*) echo "backup: DEST_DIR must not be inside SOURCE_DIR" >&2; exit 2 ;; esac
name="${3:-$(basename "$src")}"
stamp=$(date +%Y%m%d-%H%M%S)
archive="$dest/$name-$stamp.tar.gz"
if [ -e "$archive" ]; then
  echo "backup: $archive already exists" >&2
  exit 2
fi

tar -C "$(dirname "$src")" -czf "$archive" "$(basename "$src")"
if command -v sha256sum >/dev/null 2>&1; then
  (cd "$dest" && sha256sum "$(basename "$archive")" > "$(basename "$archive").sha256")
else
  (cd "$dest" && shasum -a 256 "$(basename "$archive")" > "$(basename "$archive").sha256")
fi

restore=$(mktemp -d "${TMPDIR:-/tmp}/restore-test.XXXXXX")
cleanup() { case "$restore" in "${TMPDIR:-/tmp}"/restore-test.*) rm -r -- "$restore" ;; esac; }
trap cleanup EXIT
tar -C "$restore" -xzf "$archive"
files=$(find "$src" -type f | wc -l | tr -d ' ')
bytes=$(du -sk "$archive" | cut -f1)
if diff -r "$src" "$restore/$(basename "$src")" >/dev/null; then
  echo "archive: $archive (${bytes} KiB, $files files)"
  echo "checksum: $archive.sha256"
  echo "restore test: OK, every file matches the source"
else
  echo "archive: $archive"
  echo "restore test: FAILED, the restored copy differs from the source:" >&2
  diff -rq "$src" "$restore/$(basename "$src")" | head -n 20 >&2
  exit 1
fi
