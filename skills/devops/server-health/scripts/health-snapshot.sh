#!/usr/bin/env bash
# One read-only snapshot of a Linux machine's health: uptime and load against the CPU count,
# memory and swap, disk and inode use, the processes using the most CPU and memory, listening
# ports, failed systemd units and recent kernel OOM kills. Changes nothing.
#
# usage: bash health-snapshot.sh [TOP]     (TOP: rows per process table, default 8)
set -u
top="${1:-8}"
case "$top" in *[!0-9]*|"") echo "health-snapshot: TOP must be a number" >&2; exit 2 ;; esac

section() { printf '\n== %s\n' "$1"; }

section "host"
echo "$(hostname) | $(uname -sr) | $(uptime -p 2>/dev/null || uptime)"
cpus=$(nproc 2>/dev/null || echo 1)
read -r l1 l5 l15 _ < /proc/loadavg
echo "load: $l1 (1m) $l5 (5m) $l15 (15m) on $cpus CPUs"
awk -v l="$l5" -v c="$cpus" 'BEGIN { if (l > c) print "NOTE: 5-minute load is above the CPU count" }'

section "memory (MiB)"
free -m 2>/dev/null || grep -E 'MemTotal|MemAvailable|SwapTotal|SwapFree' /proc/meminfo
awk '/MemTotal/ {t=$2} /MemAvailable/ {a=$2} END { if (t > 0 && a / t < 0.10) print "NOTE: under 10% of memory available" }' /proc/meminfo

section "disks over 80% full (bytes or inodes)"
df -hP -x tmpfs -x devtmpfs -x squashfs -x overlay 2>/dev/null | awk 'NR == 1 || $5 + 0 >= 80'
df -iP -x tmpfs -x devtmpfs -x squashfs -x overlay 2>/dev/null | awk 'NR > 1 && $5 + 0 >= 80 { print "inodes: " $0 }'

section "top CPU"
ps -eo pid,user,pcpu,pmem,etime,comm --sort=-pcpu 2>/dev/null | head -n "$((top + 1))"

section "top memory"
ps -eo pid,user,pmem,rss,etime,comm --sort=-rss 2>/dev/null | head -n "$((top + 1))"

section "listening TCP ports"
if command -v ss >/dev/null 2>&1; then
  ss -ltnp 2>/dev/null | head -n 40
else
  lsof -nP -iTCP -sTCP:LISTEN 2>/dev/null | head -n 40
fi

section "failed systemd units"
if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl --failed --no-legend --plain 2>/dev/null || true
  systemctl --user --failed --no-legend --plain 2>/dev/null || true
else
  echo "systemd is not running here"
fi

section "recent OOM kills"
if command -v journalctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  journalctl -k --since "-24h" --no-pager 2>/dev/null | grep -i -E 'out of memory|oom-kill' | tail -n 5
else
  dmesg 2>/dev/null | grep -i -E 'out of memory|oom-kill' | tail -n 5
fi
echo
echo "(snapshot taken $(date -u +%Y-%m-%dT%H:%M:%SZ))"
