// The shipped float fields (data/), whole, and a hash of a result's bytes: what
// test_reduce.cc and test_hierarchical.cc build their inputs from and compare results
// across ranks with.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "mpi_check.h"

#ifndef ZCOLL_TEST_DATA_DIR
#error "ZCOLL_TEST_DATA_DIR must be defined"
#endif

namespace {

std::vector<std::vector<float>> g_f32;

void load_fields() {
  for (const char* n : {"cesm_TS_10x192x288.f32", "echam5_T_17x96x192.f32", "turb_wmag_91x91x91.f32"}) {
    const std::string path = std::string(ZCOLL_TEST_DATA_DIR) + "/" + n;
    std::vector<float> v;
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fseek(f, 0, SEEK_END);
      v.resize(static_cast<size_t>(std::ftell(f)) / sizeof(float));
      std::fseek(f, 0, SEEK_SET);
      v.resize(std::fread(v.data(), sizeof(float), v.size(), f));
      std::fclose(f);
    }
    EXPECT(!v.empty(), "cannot read %s", path.c_str());
    if (v.empty()) v.assign(1000, 1.0f);
    g_f32.push_back(std::move(v));
  }
}

uint64_t fnv(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

}  // namespace
