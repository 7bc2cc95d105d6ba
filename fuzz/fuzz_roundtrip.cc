// libFuzzer target: arbitrary data and parameters through compress and back
// (see fuzz_roundtrip_logic.h for the layout and the checks).
#include <cstdio>
#include <cstdlib>

#include "fuzz_roundtrip_logic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (const char* err = zcoll_fuzz::check_roundtrip(data, size)) {
    std::fprintf(stderr, "zcoll fuzz: invariant violated: %s (input of %zu bytes)\n", err, size);
    std::abort();
  }
  return 0;
}
