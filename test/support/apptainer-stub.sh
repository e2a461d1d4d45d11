#!/usr/bin/env bash
# A stand-in for `apptainer` (not packaged for Debian 12, so CI has none): it records each call's
# arguments, one line per call, in $APPTAINER_STUB_LOG, and runs `exec instance://NAME CMD...`
# locally (in --pwd DIR, with --env K=V) while that instance is "running". Instances are files in
# $APPTAINER_STUB_STATE. It checks the argument shapes the backend relies on and fails like the
# real one (exit 255, "FATAL: ...") otherwise. Nothing is isolated: tests that use it say so.
set -u
log=${APPTAINER_STUB_LOG:?APPTAINER_STUB_LOG must be set}
state=${APPTAINER_STUB_STATE:?APPTAINER_STUB_STATE must be set}
mkdir -p "$state"
{ printf '%q ' "$@"; printf '\n'; } >>"$log"
fatal() { echo "FATAL:   $*" >&2; exit 255; }

case "${1:-}" in
version)
  echo "1.3.4-stub"
  ;;
build)
  [ $# -eq 3 ] || fatal "build needs SIF and SOURCE"
  [ -n "${APPTAINER_STUB_FAIL_BUILD:-}" ] && fatal "Unable to build from $3"
  printf 'stub sif of %s\n' "$3" >"$2"
  ;;
instance)
  case "${2:-}" in
  start)
    shift 2
    image="" name=""
    while [ $# -gt 0 ]; do
      case "$1" in
      --containall | --no-home | --writable-tmpfs) shift ;;
      --overlay | --memory | --cpus | --bind) [ $# -ge 2 ] || fatal "$1 needs a value"; shift 2 ;;
      -*) fatal "unknown option $1" ;;
      *) if [ -z "$image" ]; then image=$1; else name=$1; fi; shift ;;
      esac
    done
    [ -n "$image" ] && [ -n "$name" ] || fatal "instance start needs IMAGE and NAME"
    [ -e "$state/$name" ] && fatal "instance $name already exists"
    [ -n "${APPTAINER_STUB_FAIL_START:-}" ] && fatal "container creation failed: mount /proc->/proc error: permission denied"
    echo "$image" >"$state/$name"
    echo "INFO:    instance started successfully"
    ;;
  stop)
    [ -e "$state/${3:-}" ] || fatal "no instance found with name ${3:-}"
    rm -f "$state/$3"
    ;;
  list)
    for f in "$state"/*; do [ -e "$f" ] && basename "$f"; done
    ;;
  *) fatal "unknown instance command ${2:-}" ;;
  esac
  ;;
exec)
  shift
  dir=""
  envs=()
  while [ $# -gt 0 ]; do
    case "$1" in
    --pwd) dir=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    -*) fatal "unknown option $1" ;;
    *) break ;;
    esac
  done
  target=${1:-}
  shift
  case "$target" in
  instance://*) [ -e "$state/${target#instance://}" ] || fatal "no instance found with name ${target#instance://}" ;;
  *) fatal "the stub only runs commands in instances, got $target" ;;
  esac
  [ $# -gt 0 ] || fatal "exec needs a command"
  if [ -n "$dir" ]; then cd "$dir" || fatal "could not chdir to $dir"; fi
  for kv in "${envs[@]}"; do export "${kv?}"; done
  exec "$@"
  ;;
*)
  fatal "unknown command ${1:-}"
  ;;
esac
