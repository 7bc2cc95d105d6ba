// The ids of the library's codec registry, ascending, as its C API shows them:
// zcoll_codec_name knows exactly the registered ids, and a stream's codec byte is a u8.
// The fuzzers and the tests iterate these instead of keeping their own list.
#pragma once
#include <zcoll.h>

#include <vector>

namespace zcoll_fuzz {

inline const std::vector<int>& codec_ids() {
  static const std::vector<int> ids = [] {
    std::vector<int> v;
    for (int id = 0; id < 256; ++id)
      if (zcoll_codec_name(id)) v.push_back(id);
    return v;
  }();
  return ids;
}

// Every codec but fzl.
inline std::vector<int> codec_ids_other_than_fzl() {
  std::vector<int> v;
  for (int id : codec_ids())
    if (id != ZCOLL_CODEC_FZL) v.push_back(id);
  return v;
}

}  // namespace zcoll_fuzz
