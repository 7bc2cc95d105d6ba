// AUTO's warm start (ZCOLL_TUNING_FILE): what the cost model learned on a communicator is
// written to a file when the communicator is freed, and a later communicator of the same
// shape and settings (the next run of the job, or the next communicator of this one)
// starts from it instead of trying every path again.
//
// The file holds one record per key and network, 64 at most (the least recently written
// go first; a record is about 110 KB). The key covers what the learned factors depend on:
// the record's format and the model's layout, the rank count and which ranks share a
// node, every agreed setting (codec, bound, chunk length, algorithms, reduction, bound
// target, decision, configured link figures), rank 0's codec thread count, and the MPI
// library. A record is taken only if, besides, the links measured now are within 2x of
// the record's (the same network: a key may have a record for each network it ran on),
// and its checksum holds. Anything else (no file, no
// record of this key, a damaged file, a different network) leaves the model cold; creating
// the communicator never fails for the file's sake.
//
// Rank 0 of the communicator reads the file and sends the record to the others (one
// broadcast at creation, a second one when there is a record to send), so every rank
// starts from the same state and the decisions stay agreed. Rank 0 writes it at
// zcoll_comm_free, through a temporary file renamed into place; failures there are
// ignored (the next run starts cold).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

struct zcoll_comm_s;

namespace zcoll::coll {

struct ModelState;

// Collective, at zcoll_comm_create after measure_links(): rank 0's ZCOLL_TUNING_FILE, if
// it holds a record for this communicator, becomes every rank's model. Returns a zcoll code
// (ZCOLL_ERR_MPI only: a file that cannot be used is not an error).
int load_tuning(zcoll_comm_s& c);
// Local, rank 0, at zcoll_comm_free: writes this communicator's record (where the model
// learned at least one path's time), keeping the file's records of other keys and networks.
void save_tuning(const zcoll_comm_s& c);

// For tests: the key of a communicator, and the file's format.
uint64_t tuning_key(const zcoll_comm_s& c);
// The records of a file's bytes, in order, up to the first damaged one.
struct TuningRecord {
  uint64_t key = 0;
  std::vector<uint8_t> state;
};
std::vector<TuningRecord> parse_tuning(const std::vector<uint8_t>& bytes);
std::vector<uint8_t> format_tuning(const std::vector<TuningRecord>& records);
// What a state loaded from a record keeps: the learned state, not the previous process's
// call in flight (its measured time would otherwise be learned as this process's).
void forget_calls_in_flight(ModelState& s);

}  // namespace zcoll::coll
