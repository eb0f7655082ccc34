#!/usr/bin/env bash
# Compile-fail check: each *.cpp here must NOT compile, and the compiler's output must contain the sentence on its
# first line ("// expect: ..."), i.e. the static_assert that names the problem.
# usage: check.sh <c++ compiler> <include dir> <file.cpp>
set -u
cxx=$1 inc=$2 src=$3
want=$(head -1 "$src" | sed 's|^// expect: ||')
if out=$("$cxx" -std=c++20 -fsyntax-only -I"$inc" "$src" 2>&1); then
  echo "FAIL: $src compiled, but it should be rejected with: $want"; exit 1
fi
if ! grep -qF -- "$want" <<<"$out"; then
  echo "FAIL: $src was rejected without the expected message: $want"; echo "$out" | head -20; exit 1
fi
echo "ok: $src rejected with: $want"
