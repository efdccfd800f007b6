#!/usr/bin/env bash
# Installs what mofasim needs on Debian 12 (only what is missing; safe to run again), then
# configures and builds it. Usage: bash setup.sh [--tests] [build-dir]   (default: build)
# Without --tests it builds only the mofasim program (the README's run command); with --tests it
# builds everything ctest runs as well (the README's test command).
set -euo pipefail

packages=(g++ cmake make libboost-graph-dev libboost-program-options-dev libyaml-cpp-dev
          libprotobuf-dev protobuf-compiler libgtest-dev libgmock-dev libbenchmark-dev
          nlohmann-json3-dev pybind11-dev python3-dev libopenmpi-dev openmpi-bin)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

targets=(--target mofasim)
if [ "${1:-}" = "--tests" ]; then
  targets=()
  shift
fi
build_dir=${1:-build}
cmake -S "$(dirname "$0")" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "${targets[@]}"
