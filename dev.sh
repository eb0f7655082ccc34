#!/usr/bin/env bash
# graft developer entry point (Debian 12).
#   ./dev.sh demo    install deps, build, run build/examples/quickstart
#   ./dev.sh test    install deps, build, check packaging + meson, run ctest
#   ./dev.sh build   install deps, build only
#   (`test` also builds the test suite with ASan+UBSan in build-asan/ and runs it; see check_asan)
# Env: GRAFT_SANITIZE=1  use build-asan/ (ASan+UBSan) instead of build/
#      GRAFT_ASAN=0      skip the extra ASan+UBSan test run of `./dev.sh test`
#      GRAFT_JOBS=N      parallel compile/test jobs (default 2; heavy TUs ~1 GB each)
#      GRAFT_MESON_TEST=1  also build the tests with meson and run `meson test` on build-meson/
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
JOBS=${GRAFT_JOBS:-2}

PACKAGES=(g++ cmake ninja-build meson pkg-config ccache libboost-dev doctest-dev
  libbenchmark-dev libshaderc-dev glslang-dev glslang-tools spirv-tools
  libvulkan-dev mesa-vulkan-drivers)

# ASan+UBSan builds (build-asan/): -O1 (what ASan recommends) and -g1 (line tables: symbolized stacks) compile much
# faster than RelWithDebInfo's -O2 -g on these template-heavy TUs.
# The test TUs go down to -O0 (GRAFT_TEST_OPT): half the compile time of -O1 under ASan; the pipeline they call stays
# at -O1 in graft_instantiations.
SAN_ARGS=(-DGRAFT_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  -DGRAFT_TEST_OPT=-O0)
if [[ ${GRAFT_SANITIZE:-0} == 1 ]]; then
  BUILD=build-asan
  # examples/bench explicitly ON: check_asan reuses build-asan/ with them OFF
  CMAKE_ARGS=("${SAN_ARGS[@]}" -DGRAFT_BUILD_EXAMPLES=ON -DGRAFT_BUILD_BENCH=ON)
else
  BUILD=build
  CMAKE_ARGS=()
fi

step() { printf '\n==> %s\n' "$*"; }

install_deps() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    # dpkg -s also succeeds for removed-but-configured packages; check Status.
    dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  step "installing: ${missing[*]}"
  local sudo=()
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "dev.sh: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

build() {
  step "cmake build ($BUILD)"
  [[ $BUILD == build ]] || sanitizer_env  # the build runs graft_tests to list its test cases
  if [[ -f $BUILD/CMakeCache.txt ]]; then
    cmake -S . -B "$BUILD" "${CMAKE_ARGS[@]}"   # reuse: keeps cached settings
  else
    cmake -S . -B "$BUILD" -G Ninja "${CMAKE_ARGS[@]}"
  fi
  cmake --build "$BUILD" -j "$JOBS"
}

# Install into $BUILD/stage and build + run the downstream consumer with CMake
# (find_package) and meson (pkg-config), as users of an installed graft would.
check_packaging() {
  local stage=$ROOT/$BUILD/stage
  step "install to $stage"
  rm -rf "$stage"
  cmake --install "$BUILD" --prefix "$stage"
  # the doctest helpers are installed too (they are not part of graft.hpp: they need doctest)
  [[ -f $stage/include/graft/testing.hpp ]] || { echo "dev.sh: graft/testing.hpp was not installed" >&2; exit 1; }

  step "downstream consumer: CMake find_package(graft CONFIG)"
  rm -rf "$BUILD/downstream-cmake"
  cmake -S examples/downstream -B "$BUILD/downstream-cmake" -G Ninja \
    -DCMAKE_PREFIX_PATH="$stage" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
  cmake --build "$BUILD/downstream-cmake" -j "$JOBS"
  "$BUILD/downstream-cmake/downstream"

  step "downstream consumer: meson dependency('graft') via pkg-config"
  rm -rf "$BUILD/downstream-meson"
  PKG_CONFIG_PATH="$stage/share/pkgconfig" meson setup "$BUILD/downstream-meson" examples/downstream
  meson compile -C "$BUILD/downstream-meson" -j "$JOBS"
  "$BUILD/downstream-meson/downstream"
}

# Meson build of the repo itself (examples + tests). --reconfigure re-runs the
# file listing in meson.build, so newly added files are seen.
check_meson() {
  step "meson build (build-meson)"
  # The test suite is compiled once, by CMake; meson builds the library and the examples (GRAFT_MESON_TEST=1 adds
  # the tests) so CI stays well inside its time budget on 2 cores.
  local tests=false
  [[ ${GRAFT_MESON_TEST:-0} == 1 ]] && tests=true
  if [[ -f build-meson/build.ninja ]]; then
    meson setup --reconfigure -Dtests=$tests build-meson
  else
    meson setup -Dtests=$tests build-meson
  fi
  meson compile -C build-meson -j "$JOBS"
  if [[ ${GRAFT_MESON_TEST:-0} == 1 ]]; then
    meson test -C build-meson --print-errorlogs
  fi
}

# Sanitizer settings for every run of a graft_tests built with GRAFT_SANITIZE. LSan: tests/lsan.supp lists leaks
# inside system libraries (Vulkan loader / lavapipe / LLVM), not graft's; leak checking stays on for everything else.
sanitizer_env() {
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/tests/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
}

# The whole test suite once more under AddressSanitizer + UBSan (build-asan/, graft_tests only: no examples or
# benchmarks). Measured on the 2-core VM from a fresh clone: the ASan build of graft_tests took 6 min (test TUs at
# -O0, the instantiation TU at -O1; bench/README.md section 2.2) and the full ctest run under ASan 100 s (all backend
# variants, Vulkan on lavapipe). The compile-fail checks are not run again (they do not depend on the build).
check_asan() {
  [[ ${GRAFT_ASAN:-1} == 1 ]] || { step "ASan+UBSan run skipped (GRAFT_ASAN=0)"; return 0; }
  local dir=build-asan
  local args=("${SAN_ARGS[@]}" -DGRAFT_BUILD_EXAMPLES=OFF -DGRAFT_BUILD_BENCH=OFF)
  step "ASan+UBSan build ($dir, graft_tests)"
  if [[ -f $dir/CMakeCache.txt ]]; then
    cmake -S . -B "$dir" "${args[@]}"
  else
    cmake -S . -B "$dir" -G Ninja "${args[@]}"
  fi
  sanitizer_env
  cmake --build "$dir" -j "$JOBS" --target graft_tests
  step "ctest under ASan+UBSan ($dir)"
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$JOBS" -E '^compile_fail'
}

run_ctest() {
  step "ctest ($BUILD)"
  [[ $BUILD == build ]] || sanitizer_env
  # Last command on purpose: ctest's summary ("N% tests passed, ... out of M")
  # is the last thing printed. --no-tests=error: an empty suite is a failure.
  ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j "$JOBS"
}

cmd=${1:-}
case $cmd in
  build)
    install_deps
    build
    ;;
  demo)
    if [[ ! -f examples/quickstart.cpp ]]; then
      echo "dev.sh demo: examples/quickstart.cpp does not exist yet; nothing to run." >&2
      exit 1
    fi
    install_deps
    build
    step "build/examples/quickstart"
    "$BUILD/examples/quickstart"
    ;;
  test)
    install_deps
    build
    check_packaging
    if [[ $BUILD == build ]]; then
      check_meson
      check_asan
    else
      step "meson build and the extra ASan run skipped in GRAFT_SANITIZE mode (this run is the ASan one)"
    fi
    run_ctest
    ;;
  *)
    echo "usage: $0 {demo|test|build}   (env: GRAFT_SANITIZE=1, GRAFT_JOBS=N, GRAFT_MESON_TEST=1)" >&2
    exit 2
    ;;
esac
