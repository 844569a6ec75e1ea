#include "state/lease_table.hpp"

#include <cstring>
#include <iterator>

namespace ringsmb::state {

uint32_t oplock_to_lease_bits(uint8_t level) {
  switch (level) {
    case kOplockLevelII: return kLeaseRead;
    case kOplockExclusive: return kLeaseRead | kLeaseWrite;
    case kOplockBatch: return kLeaseRead | kLeaseWrite | kLeaseHandle;
    default: return kLeaseNone;
  }
}

uint8_t lease_bits_to_oplock(uint32_t bits) {
  if (!(bits & kLeaseRead)) return kOplockNone;
  if (bits & kLeaseHandle) return (bits & kLeaseWrite) ? kOplockBatch : kOplockLevelII;
  return (bits & kLeaseWrite) ? kOplockExclusive : kOplockLevelII;
}

uint32_t normalise_lease(uint32_t bits) {
  bits &= kLeaseRead | kLeaseWrite | kLeaseHandle;
  return (bits & kLeaseRead) ? bits : kLeaseNone;
}

namespace {
// SYNCHRONIZE, FILE_READ_ATTRIBUTES, FILE_WRITE_ATTRIBUTES: no data, no
// EAs, no delete.
constexpr uint32_t kStatAccess = 0x00100000 | 0x80 | 0x100;
constexpr uint32_t kReadControl = 0x00020000;

// Some of STAT and nothing else: an open asking for no access at all is
// not a stat open (Windows breaks a batch oplock for it: smb2.oplock.statopen1).
bool only_of(uint32_t access, uint32_t stat) { return (access & stat) != 0 && (access & ~stat) == 0; }
}  // namespace

bool is_stat_open(uint32_t access) {
  // For leases READ_CONTROL counts as a stat open too; FILE_READ_EA does
  // not (Windows breaks an RWH lease for it: smb2.lease.statopen4).
  return only_of(access, kStatAccess | kReadControl);
}

bool is_oplock_stat_open(uint32_t access) {
  // For an oplock READ_CONTROL is not one (smb2.oplock.statopen1).
  return only_of(access, kStatAccess);
}

size_t LeaseTable::KeyHash::operator()(const Key& k) const {
  uint64_t a, b, c, d;
  std::memcpy(&a, k.client.data(), 8);
  std::memcpy(&b, k.client.data() + 8, 8);
  std::memcpy(&c, k.key.data(), 8);
  std::memcpy(&d, k.key.data() + 8, 8);
  return size_t((a * 0x9E3779B97F4A7C15ull) ^ b ^ (c * 0xC2B2AE3D27D4EB4Full) ^ d);
}

LeaseTable::Shard& LeaseTable::shard_for(const Key& k) { return shards_[KeyHash()(k) % kShards]; }

std::shared_ptr<Lease> LeaseTable::find_or_create(const Guid& client, const Guid& key) {
  Key k{client, key};
  Shard& s = shard_for(k);
  std::lock_guard lock(s.mu);
  auto it = s.leases.find(k);
  if (it != s.leases.end())
    if (auto l = it->second.lock()) return l;
  // Forget leases whose opens all closed, now and then, so the map does not grow.
  if (s.leases.size() > 64)
    std::erase_if(s.leases, [](const auto& kv) { return kv.second.expired(); });
  auto l = std::make_shared<Lease>();
  l->client_guid = client;
  l->key = key;
  s.leases[k] = l;
  return l;
}

std::shared_ptr<Lease> LeaseTable::find(const Guid& client, const Guid& key) {
  Key k{client, key};
  Shard& s = shard_for(k);
  std::lock_guard lock(s.mu);
  auto it = s.leases.find(k);
  return it == s.leases.end() ? nullptr : it->second.lock();
}

}  // namespace ringsmb::state
