#include "png_writer.h"

#include <array>
#include <cstdio>

namespace zcoll_apps {
namespace {

const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  return table;
}

void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

// A chunk: length, type, data, CRC over type and data.
void put_chunk(std::vector<uint8_t>& out, const char type[4], const std::vector<uint8_t>& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  const size_t crc_from = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = crc_from; i < out.size(); ++i) c = crc_table()[(c ^ out[i]) & 0xFF] ^ (c >> 8);
  put_be32(out, c ^ 0xFFFFFFFFu);
}

// zlib stream of stored deflate blocks (at most 65535 bytes each) and the Adler-32 trailer.
std::vector<uint8_t> zlib_stored(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> z = {0x78, 0x01};
  size_t pos = 0;
  do {
    const size_t len = raw.size() - pos < 65535 ? raw.size() - pos : 65535;
    const bool last = pos + len == raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<uint8_t>(len));
    z.push_back(static_cast<uint8_t>(len >> 8));
    z.push_back(static_cast<uint8_t>(~len));
    z.push_back(static_cast<uint8_t>(~len >> 8));
    z.insert(z.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos),
             raw.begin() + static_cast<std::ptrdiff_t>(pos + len));
    pos += len;
  } while (pos < raw.size());
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  put_be32(z, (b << 16) | a);
  return z;
}

}  // namespace

bool write_png(const std::string& path, const std::vector<uint8_t>& pixels, unsigned width, unsigned height,
               unsigned channels) {
  if ((channels != 1 && channels != 3) || width == 0 || height == 0 ||
      pixels.size() != static_cast<size_t>(width) * height * channels)
    return false;
  std::vector<uint8_t> raw;  // each row behind filter byte 0 (none)
  raw.reserve((static_cast<size_t>(width) * channels + 1) * height);
  for (unsigned y = 0; y < height; ++y) {
    raw.push_back(0);
    const auto row = pixels.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(y) * width * channels);
    raw.insert(raw.end(), row, row + static_cast<std::ptrdiff_t>(width * channels));
  }
  std::vector<uint8_t> file = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, static_cast<uint8_t>(channels == 1 ? 0 : 2), 0, 0, 0});
  put_chunk(file, "IHDR", ihdr);
  put_chunk(file, "IDAT", zlib_stored(raw));
  put_chunk(file, "IEND", {});
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(file.data(), 1, file.size(), f) == file.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace zcoll_apps
