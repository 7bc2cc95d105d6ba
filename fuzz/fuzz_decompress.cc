// libFuzzer target: arbitrary bytes into zcoll_stream_inspect, zcoll_decompress
// and the reader API (see fuzz_decompress_logic.h for the invariants checked).
//
// The custom mutator applies libFuzzer's mutations and then, every other time,
// re-seals the checksums of the result (reseal_stream.h), so that mutated valid
// streams get past the checksums into the header/index validation and the chunk
// decoders instead of being rejected at the first checksum.
#include <cstdio>
#include <cstdlib>

#include "fuzz_decompress_logic.h"
#include "reseal_stream.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (const char* err = zcoll_fuzz::check_decompress(data, size)) {
    std::fprintf(stderr, "zcoll fuzz: invariant violated: %s (input of %zu bytes)\n", err, size);
    std::abort();
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed & 1) zcoll_fuzz::reseal_stream(data, size);
  return size;
}
