#!/usr/bin/env bash
# A read-only overview of Docker on this machine: containers (running and stopped), what is unhealthy
# or restarting, disk use by images, containers, volumes and build cache, and the Compose project in
# the current folder when there is one. It never starts, stops or removes anything.
#
# usage: bash docker-summary.sh [COMPOSE_DIR]
set -u
dir="${1:-.}"
if ! command -v docker >/dev/null 2>&1; then
  echo "docker-summary: the docker CLI is not installed" >&2
  exit 2
fi
if ! docker info >/dev/null 2>&1; then
  echo "docker-summary: cannot reach the Docker daemon (not running, or this user is not allowed to use it)" >&2
  exit 2
fi

echo "== containers"
docker ps -a --format 'table {{.Names}}\t{{.Image}}\t{{.Status}}\t{{.Ports}}'
echo
echo "== needs attention (unhealthy, restarting, exited with an error)"
docker ps -a --format '{{.Names}}\t{{.Status}}' | awk -F'\t' '
  /unhealthy|Restarting/ || ($2 ~ /^Exited/ && $2 !~ /Exited \(0\)/) { print "  " $1 ": " $2; n++ }
  END { if (!n) print "  nothing" }'
echo
echo "== disk use"
docker system df
echo
echo "== dangling images (safe to prune after a yes)"
docker images --filter dangling=true --format '{{.ID}}\t{{.Size}}\t{{.CreatedSince}}' | head -n 20
for f in compose.yaml compose.yml docker-compose.yml docker-compose.yaml; do
  if [ -f "$dir/$f" ]; then
    echo
    echo "== compose project in $dir ($f)"
    (cd "$dir" && docker compose ps 2>&1 | head -n 30)
    break
  fi
done
