// The layer is built against one MPI's ABI: its handle types and constants are MPICH's or
// Open MPI's. Preloaded into a program of the other MPI, its first MPI call would crash,
// so it checks before main() which library provides PMPI_Init in this process. If that is
// the other MPI, it says so once (on the launcher's rank 0, or wherever no rank is known)
// and runs the program again from the start without itself: LD_PRELOAD minus this
// library, the same arguments, the same open descriptors (so the launcher's connection
// survives). The program then runs unchanged. A library it cannot identify (MPI linked
// statically, for example) is assumed to be the right one.
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

#if defined(OPEN_MPI)
constexpr const char* kBuiltFor = "Open MPI";
constexpr const char* kOtherLibrary = "libmpich";
#else
constexpr const char* kBuiltFor = "MPICH";
constexpr const char* kOtherLibrary = "libmpi.so";
#endif

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// LD_PRELOAD (entries separated by ':' or ' ') without this library.
std::string preload_without(const std::string& self) {
  const char* env = std::getenv("LD_PRELOAD");
  std::string kept, entry;
  const std::string all = env ? env : "";
  for (size_t i = 0; i <= all.size(); ++i) {
    if (i < all.size() && all[i] != ':' && all[i] != ' ') {
      entry += all[i];
      continue;
    }
    if (!entry.empty() && base_name(entry) != base_name(self)) kept += (kept.empty() ? "" : ":") + entry;
    entry.clear();
  }
  return kept;
}

__attribute__((constructor)) void run_without_layer_under_other_mpi() {
  void* init = dlsym(RTLD_DEFAULT, "PMPI_Init");
  Dl_info mpi{}, self{};
  if (!init || !dladdr(init, &mpi) || !mpi.dli_fname || !std::strstr(base_name(mpi.dli_fname).c_str(), kOtherLibrary))
    return;
  if (!dladdr(reinterpret_cast<void*>(&run_without_layer_under_other_mpi), &self) || !self.dli_fname) return;
  const char* rank = std::getenv("PMI_RANK");
  if (!rank) rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!rank || std::strcmp(rank, "0") == 0)
    std::fprintf(stderr,
                 "zcoll-mpi: %s is built for %s but this program uses %s; it runs without the layer "
                 "(use the libzcoll_mpi.so of a zcoll built with that MPI)\n",
                 self.dli_fname, kBuiltFor, mpi.dli_fname);
  const std::string kept = preload_without(self.dli_fname);
  if (kept.empty()) unsetenv("LD_PRELOAD");
  else setenv("LD_PRELOAD", kept.c_str(), 1);
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  const std::string args((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::vector<char*> argv;
  for (size_t at = 0; at < args.size(); at += std::strlen(args.c_str() + at) + 1)
    argv.push_back(const_cast<char*>(args.c_str() + at));
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "zcoll-mpi: cannot restart the program without the layer (%s); stopping it\n",
               std::strerror(errno));
  _exit(1);
}

}  // namespace
