// zcoll communicators: a duplicate of the user's communicator (so zcoll's messages never
// match the application's), errors returned instead of fatal, and reusable buffers.
#include <cmath>
#include <new>

#include "codec/stream.h"
#include "coll/coll.h"

extern "C" {

void zcoll_config_init(zcoll_config* cfg) {
  if (!cfg) return;
  *cfg = zcoll_config{};
  zcoll_codec_params_init(&cfg->codec);
  cfg->min_bytes = ZCOLL_DEFAULT_MIN_BYTES;
  cfg->algorithm = ZCOLL_ALGO_AUTO;
}

int zcoll_comm_create(MPI_Comm comm, const zcoll_config* cfg, zcoll_comm* out) {
  if (!out) return ZCOLL_ERR_ARG;
  *out = nullptr;
  if (comm == MPI_COMM_NULL || !cfg) return ZCOLL_ERR_ARG;
  const zcoll_codec_params& p = cfg->codec;
  const zcoll::codec::ChunkCodec* codec = zcoll::codec::chunk_codec(p.codec);
  // Homomorphic reductions combine the codec's integers: fzl only.
  if (!codec || (cfg->reduction == ZCOLL_REDUCTION_HOMOMORPHIC && !codec->homomorphic)) return ZCOLL_ERR_CODEC;
  if ((p.eb_mode != ZCOLL_EB_ABS && p.eb_mode != ZCOLL_EB_REL) || !std::isfinite(p.eb) || !(p.eb > 0) ||
      p.threads < 0 || (p.chunk_len && (p.chunk_len % 32 || p.chunk_len > ZCOLL_MAX_CHUNK_LEN)) ||
      cfg->algorithm < ZCOLL_ALGO_AUTO || cfg->algorithm > ZCOLL_ALGO_RECURSIVE_DOUBLING ||
      cfg->reduction < ZCOLL_REDUCTION_AUTO || cfg->reduction > ZCOLL_REDUCTION_DOC ||
      (cfg->bound_target != ZCOLL_BOUND_INPUT && cfg->bound_target != ZCOLL_BOUND_RESULT))
    return ZCOLL_ERR_ARG;
  zcoll_comm_s* c = new (std::nothrow) zcoll_comm_s;
  if (!c) return ZCOLL_ERR_NO_MEMORY;
  c->cfg = *cfg;
  c->cfg.codec.ndims = 0;
  if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
    delete c;
    return ZCOLL_ERR_MPI;
  }
  MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  if (MPI_Comm_dup(c->comm, &c->p2p) != MPI_SUCCESS) {
    MPI_Comm_free(&c->comm);
    delete c;
    return ZCOLL_ERR_MPI;
  }
  MPI_Comm_set_errhandler(c->p2p, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  *out = c;
  return ZCOLL_SUCCESS;
}

int zcoll_comm_free(zcoll_comm* zc) {
  if (!zc || !*zc) return ZCOLL_ERR_ARG;
  const bool ok = MPI_Comm_free(&(*zc)->p2p) == MPI_SUCCESS;
  const int rc = MPI_Comm_free(&(*zc)->comm) == MPI_SUCCESS && ok ? ZCOLL_SUCCESS : ZCOLL_ERR_MPI;
  delete *zc;
  *zc = nullptr;
  return rc;
}

int zcoll_last_stats(zcoll_comm c, zcoll_stats* stats) {
  if (!c || !stats) return ZCOLL_ERR_ARG;
  *stats = c->last;
  return ZCOLL_SUCCESS;
}

}  // extern "C"
