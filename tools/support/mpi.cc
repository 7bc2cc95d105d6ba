#include <cctype>

#include "tool_support.h"

namespace zsupport {

std::string mpi_library() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, std::min<size_t>(static_cast<size_t>(std::max(len, 0)), sizeof buf - 1));
  s = s.substr(0, s.find_first_of(std::string("\n\0", 2)));
  std::replace(s.begin(), s.end(), '\t', ' ');
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

double time_call(const std::function<int()>& call, int* code, MPI_Comm comm) {
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  const int mine = call();
  // Every rank learns of a failure anywhere, so that none waits in a later collective.
  double v[2] = {MPI_Wtime() - t0, static_cast<double>(mine)}, m[2];
  MPI_Allreduce(v, m, 2, MPI_DOUBLE, MPI_MAX, comm);
  *code = m[1] == 0 ? 0 : mine ? mine : static_cast<int>(m[1]);
  return m[0];
}

double time_collective(int warmup, int iters, const std::function<int()>& call, int* code,
                       std::vector<double>* times) {
  times->clear();
  for (int i = 0; i < warmup + iters; ++i) {
    const double t = time_call(call, code);
    if (*code) return 0;
    if (i >= warmup) times->push_back(t);
  }
  return median(*times);
}

}  // namespace zsupport
