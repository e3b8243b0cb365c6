# Sourced by run-tests.sh and fuzz-campaign.sh: the environment a sanitizer build (make test SANITIZE=1, make fuzz)
# runs under. Inert for an uninstrumented build. Each variable set by the caller is kept.
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# A UBSan report fails the test or fuzz input that hit it, with the stack that names the code at fault.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo_root/tests/sanitizers/lsan.supp}
# The sanitizers look for a symbolizer named exactly `llvm-symbolizer` on PATH; Debian installs it versioned
# (llvm-symbolizer-N), and without it the stacks are bare addresses.
if [[ -z ${ASAN_SYMBOLIZER_PATH:-} ]]; then
  for candidate in llvm-symbolizer $(compgen -c llvm-symbolizer- | sort -t- -k3 -n -r); do
    if path=$(command -v "$candidate"); then
      export ASAN_SYMBOLIZER_PATH=$path
      break
    fi
  done
fi
