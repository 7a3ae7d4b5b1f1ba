#!/usr/bin/env bash
# Installs what building and testing libdtrain needs on Debian 12, and only
# what is missing: running it again changes nothing.
set -euo pipefail

apt_packages=(
  build-essential cmake ninja-build pkg-config git
  libucx-dev libdlpack-dev libssl-dev libopenblas-dev
  libgtest-dev
  nlohmann-json3-dev libcli11-dev libcjson-dev
  openmpi-bin libopenmpi-dev gfortran
  swig python3-dev bindgen abigail-tools
  clang libclang-rt-14-dev iproute2 binutils
  doxygen debhelper dh-python lintian python3-all-dev python3-numpy python3-setuptools python3-wheel
  fortunes   # the text the main job (tools/run-main.sh) trains its GPT on
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
  missing+=(cargo)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
pip_missing=()
# setuptools and wheel let `pip install ./bindings/python` build offline.
for m in numpy pytest setuptools wheel; do
  "$python" -c "import $m" 2>/dev/null || pip_missing+=("$m")
done
if [ ${#pip_missing[@]} -gt 0 ]; then
  echo "setup: pip installing ${pip_missing[*]}"
  "$python" -m pip install -q "${pip_missing[@]}"
fi
echo "setup: everything needed is installed"
