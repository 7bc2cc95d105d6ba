// A minimal PNG writer (8-bit grey or RGB, no interlace) with no library behind it: the
// image data goes into stored (uncompressed) deflate blocks, which every PNG reader
// accepts. The demo's pictures are at most a few MiB, so compression is not worth a
// zlib dependency on the machines zcoll has to build on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zcoll_apps {

// pixels: height rows of width x channels bytes (channels 1 = grey, 3 = RGB).
// Returns false (and leaves no partial file behind) if the file cannot be written.
bool write_png(const std::string& path, const std::vector<uint8_t>& pixels, unsigned width, unsigned height,
               unsigned channels);

}  // namespace zcoll_apps
