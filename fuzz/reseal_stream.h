// Re-seals a (mutated) zcoll stream of any codec: recomputes every chunk checksum whose
// chunk lies inside the buffer, then the header checksum. The fuzzers and the replay
// test use it so that mutations get past the checksums and reach the chunk decoders.
// It follows the container of src/codec/container.h; the test
// FuzzReplay.ResealIsIdentityOnValidStreams fails if it goes stale.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/container.h"

namespace zcoll_fuzz {

// Returns false when the bytes do not even look like a zcoll header.
inline bool reseal_stream(uint8_t* p, size_t n) {
  using namespace zcoll::codec;
  if (n < kHeaderBytes) return false;
  for (int i = 0; i < 4; ++i)
    if (p[header_offset::kMagic + i] != kMagic[i]) return false;
  const uint64_t nchunks = load_u32(p + header_offset::kNchunks);
  if (nchunks > (n - kHeaderBytes) / kIndexEntryBytes) return false;
  size_t pos = kHeaderBytes + nchunks * kIndexEntryBytes;
  for (uint64_t k = 0; k < nchunks; ++k) {
    uint8_t* entry = p + kHeaderBytes + k * kIndexEntryBytes;
    const size_t len = load_u32(entry) & ~kRawChunkFlag;
    if (len > n - pos) break;
    store_u32(entry + 4, checksum(p + pos, len));
    pos += len;
  }
  store_u32(p + header_offset::kChecksum, header_checksum(p, nchunks));
  return true;
}

}  // namespace zcoll_fuzz
