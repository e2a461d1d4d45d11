#!/usr/bin/env bash
# Read-only report of what fills a directory tree: the filesystem's free space, the biggest folders
# and the biggest files, and well-known caches that are usually safe to clear. Deletes nothing.
#
# usage: bash disk-report.sh [DIR] [TOP] [MIN_FILE_KIB]
#   DIR           where to look (default: the current directory); stays on DIR's filesystem
#   TOP           how many rows per section (default 15)
#   MIN_FILE_KIB  list files at least this big, in KiB (default 51200 = 50 MiB)
set -u
dir="${1:-.}"
top="${2:-15}"
min_kb="${3:-51200}"
if [ ! -d "$dir" ]; then
  echo "disk-report: not a directory: $dir" >&2
  exit 2
fi
case "$top$min_kb" in *[!0-9]*) echo "disk-report: TOP and MIN_FILE_KIB must be numbers" >&2; exit 2 ;; esac

human() {
  awk -v k="$1" 'BEGIN { split("KiB MiB GiB TiB", u, " "); i = 1; while (k >= 1024 && i < 4) { k /= 1024; i++ } printf "%.1f %s", k, u[i] }'
}

echo "== filesystem holding $dir"
df -h "$dir"
echo
echo "== biggest folders (two levels down, same filesystem)"
du -x -k -d 2 "$dir" 2>/dev/null | sort -rn | head -n "$top" | while IFS=$'\t' read -r kib path; do
  printf '%12s  %s\n' "$(human "$kib")" "$path"
done
echo
echo "== biggest files of at least $(human "$min_kb")"
find "$dir" -xdev -type f -size +"$((min_kb - 1))"k -exec du -k {} + 2>/dev/null | sort -rn | head -n "$top" |
  while IFS=$'\t' read -r kib path; do
    printf '%12s  %s\n' "$(human "$kib")" "$path"
  done
echo
echo "== caches and build output found (usually safe to clear after a check)"
found=0
while IFS= read -r hit; do
  kib=$(du -x -k -s "$hit" 2>/dev/null | cut -f1)
  printf '%12s  %s\n' "$(human "${kib:-0}")" "$hit"
  found=1
done < <(find "$dir" -xdev -maxdepth 4 -type d \( -name node_modules -o -name __pycache__ -o -name .cache \
  -o -name .pytest_cache -o -name .gradle -o -name target -o -name .next -o -name dist \) -prune -print 2>/dev/null | head -n "$top")
[ "$found" = 1 ] || echo "  none within four levels"
echo
echo "Nothing was deleted. Confirm each removal with the user before running it."
