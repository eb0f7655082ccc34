#!/usr/bin/env bash
# Compile-time cost of graft rules: generates a TU with N distinct rules (default 200) and a baseline TU that only
# includes graft.hpp, compiles each with `g++ -std=c++20 -O2 -c` under /usr/bin/time -v, and reports CPU seconds
# (user+sys), peak RSS and object size. Not part of the CMake build on purpose (the rule TU takes a minute).
#
#   bench/compile_time/measure.sh [N ...]        e.g. measure.sh 200   or   measure.sh 50 100 200
# Environment: CXX (default g++), CXXFLAGS (default "-std=c++20 -O2"), RUNS (compiles per TU, min is reported;
# default 1), OUT (work dir, default build/compile_time). Run it on a quiet machine, one compile at a time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CXX="${CXX:-g++}"
CXXFLAGS="${CXXFLAGS:--std=c++20 -O2}"
RUNS="${RUNS:-1}"
OUT="${OUT:-$root/build/compile_time}"
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(200)
mkdir -p "$OUT"

# one compile: prints "cpu_s rss_mb obj_kb"
compile_once() {
  local src="$1" obj="$2" log="$OUT/time.log"
  if ! /usr/bin/time -v "$CXX" $CXXFLAGS -I"$root/include" -c "$src" -o "$obj" 2>"$log"; then
    cat "$log" >&2
    echo "compile failed: $src" >&2
    exit 1
  fi
  awk -v obj="$(stat -c %s "$obj")" '
    /User time \(seconds\)/   { u = $NF }
    /System time \(seconds\)/ { s = $NF }
    /Maximum resident set size/ { r = $NF }
    END { printf "%.2f %.0f %.0f\n", u + s, r / 1024, obj / 1024 }' "$log"
}
# min CPU over RUNS compiles (RSS and size of that run)
measure() {
  local src="$1" obj="$2" best="" line
  for _ in $(seq "$RUNS"); do
    line="$(compile_once "$src" "$obj")"
    if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best="$line"; fi
  done
  echo "$best"
}

echo "compiler: $("$CXX" --version | head -1)"
echo "flags:    $CXXFLAGS   runs per TU: $RUNS (min CPU reported)   load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-22s %10s %12s %12s %14s\n" "TU" "CPU s" "peak RSS MB" "object KB" "CPU s / rule"
python3 "$here/gen_rules.py" "$OUT" "${sizes[0]}" >/dev/null
read -r base_cpu base_rss base_obj < <(measure "$OUT/baseline.cpp" "$OUT/baseline.o")
printf "%-22s %10s %12s %12s %14s\n" "baseline (graft.hpp)" "$base_cpu" "$base_rss" "$base_obj" "-"
for n in "${sizes[@]}"; do
  python3 "$here/gen_rules.py" "$OUT" "$n" >/dev/null
  read -r cpu rss obj < <(measure "$OUT/rules_$n.cpp" "$OUT/rules_$n.o")
  per=$(awk -v c="$cpu" -v b="$base_cpu" -v n="$n" 'BEGIN { printf "%.3f", (c - b) / n }')
  printf "%-22s %10s %12s %12s %14s\n" "$n rules" "$cpu" "$rss" "$obj" "$per"
done
