// Writes a seed corpus, one file per input, into SEED_DIR (created if needed):
//   make_seed_corpus decompress SEED_DIR [WORK_DIR]   small valid streams (seed_streams.h)
//   make_seed_corpus roundtrip SEED_DIR [WORK_DIR]    inputs for fuzz_roundtrip
// WORK_DIR, if given, is created empty (the corpus libFuzzer writes to).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "seed_streams.h"

static bool make_dir(const std::string& d) { return mkdir(d.c_str(), 0755) == 0 || errno == EEXIST; }

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (argc < 3 || (mode != "decompress" && mode != "roundtrip")) {
    std::fprintf(stderr, "usage: %s decompress|roundtrip SEED_DIR [WORK_DIR]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[2];
  if (!make_dir(dir) || (argc > 3 && !make_dir(argv[3]))) {
    std::perror("mkdir");
    return 1;
  }
  std::vector<zcoll_fuzz::SeedStream> seeds;
  if (mode == "roundtrip") {
    zcoll_fuzz::make_roundtrip_seeds(&seeds);
  } else if (!zcoll_fuzz::make_seed_streams(&seeds)) {
    std::fprintf(stderr, "make_seed_corpus: the codec failed to make a seed stream\n");
    return 1;
  }
  for (const auto& s : seeds) {
    const std::string path = dir + "/" + s.name + ".zc";
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(s.bytes.data(), 1, s.bytes.size(), f) != s.bytes.size() || std::fclose(f) != 0) {
      std::perror(path.c_str());
      return 1;
    }
  }
  std::printf("make_seed_corpus: %zu streams in %s\n", seeds.size(), dir.c_str());
  return 0;
}
