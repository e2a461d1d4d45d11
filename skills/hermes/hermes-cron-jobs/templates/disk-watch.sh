#!/usr/bin/env bash
# A cron pre-check script: wakes the agent only when a filesystem is fuller than a threshold.
# The user copies it into ~/.hermes/scripts/ (the agent may not write there) and attaches it to a
# job with --script disk-watch.sh. Output before the last line is handed to the agent; a last line
# {"wakeAgent": false} skips the run, so quiet days cost no model call.
#
# usage (by the job): disk-watch.sh [PERCENT] [MOUNT...]   defaults: 85 and /
set -u
limit="${1:-85}"
shift || true
[ $# -gt 0 ] || set -- /
full=0
for mount in "$@"; do
  used=$(df -P "$mount" 2>/dev/null | awk 'NR == 2 { sub("%", "", $5); print $5 }')
  if [ -n "$used" ] && [ "$used" -ge "$limit" ]; then
    echo "$mount is ${used}% full (limit ${limit}%)"
    full=1
  fi
done
if [ "$full" = 0 ]; then
  echo '{"wakeAgent": false}'
fi
