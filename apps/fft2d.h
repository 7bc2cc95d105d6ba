// The distributed 2-D complex FFT of zcoll-fft2d (apps/fft2d.cc, which states the method and
// its error bound) and of its plain-MPI twin fft2d-plain (apps/plain/fft2d_plain.cc): the
// transform, the transposes' packing and the input plane, so that the two programs compute the
// same thing and differ only in how the alltoall is called.
#ifndef ZCOLL_APPS_FFT2D_H
#define ZCOLL_APPS_FFT2D_H

#include <cmath>
#include <complex>
#include <cstddef>
#include <utility>
#include <vector>

namespace fft2d {

using cplx = std::complex<double>;

// In-place radix-2 decimation-in-time FFT of length n (a power of two), with the
// bit-reversal permutation and the twiddles computed once per size.
class Fft {
 public:
  explicit Fft(size_t n) : n_(n), rev_(n), w_(n / 2) {
    int bits = 0;
    while ((size_t{1} << bits) < n) ++bits;
    for (size_t i = 0; i < n; ++i) {
      size_t r = 0;
      for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
      rev_[i] = r;
    }
    const double pi = std::acos(-1.0);
    for (size_t k = 0; k < n / 2; ++k)
      w_[k] = std::polar(1.0, -2 * pi * static_cast<double>(k) / static_cast<double>(n));
  }
  void operator()(cplx* x) const {
    for (size_t i = 0; i < n_; ++i)
      if (i < rev_[i]) std::swap(x[i], x[rev_[i]]);
    for (size_t len = 2; len <= n_; len <<= 1) {
      const size_t half = len / 2, step = n_ / len;
      for (size_t s = 0; s < n_; s += len)
        for (size_t j = 0; j < half; ++j) {
          const cplx t = w_[j * step] * x[s + j + half];
          x[s + j + half] = x[s + j] - t;
          x[s + j] += t;
        }
    }
  }

 private:
  size_t n_;
  std::vector<size_t> rev_;
  std::vector<cplx> w_;
};

// Index i of an axis of length n, mirrored at the edges (i mod 2n, reflected into [0, n)).
inline size_t mirror(size_t i, size_t n) {
  const size_t m = i % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

// One rank's share of the N x N transform over p ranks: rows [r m, (r+1) m), m = N / p.
class Distributed {
 public:
  Distributed(size_t n, size_t ranks, size_t rank)
      : n_(n), m_(n / ranks), p_(ranks), r_(rank), fft_(n), sbuf_(m_ * n), rbuf_(m_ * n) {}
  size_t rows() const { return m_; }
  size_t values() const { return m_ * n_; }
  // Doubles per alltoall block: an m x m block of complex values.
  int block_doubles() const { return static_cast<int>(2 * m_ * m_); }

  // This rank's rows of the input: a ny x nx real plane mirrored onto N x N, imaginary parts 0.
  std::vector<cplx> input_rows(const double* plane, size_t ny, size_t nx) const {
    std::vector<cplx> x(values());
    for (size_t i = 0; i < m_; ++i)
      for (size_t j = 0; j < n_; ++j) x[i * n_ + j] = plane[mirror(r_ * m_ + i, ny) * nx + mirror(j, nx)];
    return x;
  }

  // f (rows() x N) becomes its rows of the 2-D transform: row FFTs, a transpose, row FFTs (the
  // original columns), a transpose back. alltoall(send, recv) must exchange block_doubles()
  // doubles with every rank, as MPI_Alltoall of MPI_DOUBLE does.
  template <class Alltoall>
  void forward(cplx* f, Alltoall&& alltoall) {
    for (size_t i = 0; i < m_; ++i) fft_(f + i * n_);
    transpose(f, alltoall);
    for (size_t i = 0; i < m_; ++i) fft_(f + i * n_);
    transpose(f, alltoall);
  }

 private:
  // Block q of the send buffer holds my rows' columns [q m, (q+1) m); the block received from
  // q holds its rows' values in my columns, which become my rows once each block is transposed.
  template <class Alltoall>
  void transpose(cplx* v, Alltoall& alltoall) {
    for (size_t q = 0; q < p_; ++q)
      for (size_t i = 0; i < m_; ++i)
        for (size_t j = 0; j < m_; ++j) sbuf_[(q * m_ + i) * m_ + j] = v[i * n_ + q * m_ + j];
    alltoall(reinterpret_cast<const double*>(sbuf_.data()), reinterpret_cast<double*>(rbuf_.data()));
    for (size_t q = 0; q < p_; ++q)
      for (size_t i = 0; i < m_; ++i)
        for (size_t j = 0; j < m_; ++j) v[j * n_ + q * m_ + i] = rbuf_[(q * m_ + i) * m_ + j];
  }

  size_t n_, m_, p_, r_;
  Fft fft_;
  std::vector<cplx> sbuf_, rbuf_;
};

}  // namespace fft2d

#endif
