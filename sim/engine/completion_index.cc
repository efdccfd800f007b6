// CompletionIndex implementation: equal-time buckets and a lazy heap of bucket times.
#include "sim/engine/completion_index.h"

#include <algorithm>

#include "sim/units/check.h"

namespace mofasim::sim {
namespace {

// std heap functions build a max-heap: "later" puts the earliest time on top.
struct Later {
  template <class E>
  bool operator()(const E& a, const E& b) const {
    return a.when_ns > b.when_ns;
  }
};

}  // namespace

std::uint32_t CompletionIndex::bucket_for(std::int64_t when_ns) {
  if (last_bucket_ != kInvalidIndex && buckets_[last_bucket_].live && buckets_[last_bucket_].when_ns == when_ns) {
    return last_bucket_;
  }
  std::uint32_t b;
  if (!free_buckets_.empty()) {
    b = free_buckets_.back();
    free_buckets_.pop_back();
  } else {
    MOFASIM_CHECK(buckets_.size() < kInvalidIndex, "completion index: too many buckets");
    b = static_cast<std::uint32_t>(buckets_.size());
    buckets_.emplace_back();
  }
  Bucket& bucket = buckets_[b];
  bucket.when_ns = when_ns;
  bucket.live = true;
  ++live_buckets_;
  if (heap_.size() > 2 * live_buckets_ + 64) {
    rebuild_heap();  // includes the new bucket
  } else {
    heap_.push_back(TimeEntry{.when_ns = when_ns, .bucket = b, .generation = bucket.generation});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  last_bucket_ = b;
  return b;
}

void CompletionIndex::free_bucket(std::uint32_t b) {
  Bucket& bucket = buckets_[b];
  bucket.live = false;
  ++bucket.generation;
  bucket.items.clear();
  free_buckets_.push_back(b);
  --live_buckets_;
}

void CompletionIndex::remove(std::uint32_t slot) {
  Pos& p = pos_[slot];
  Bucket& bucket = buckets_[p.bucket];
  const Item moved = bucket.items.back();
  bucket.items[p.index] = moved;
  pos_[moved.slot].index = p.index;
  bucket.items.pop_back();
  if (bucket.items.empty()) free_bucket(p.bucket);
  p.bucket = kInvalidIndex;
  --size_;
}

void CompletionIndex::set(std::uint32_t slot, std::int64_t when_ns, std::uint64_t seq) {
  if (slot >= pos_.size()) pos_.resize(slot + 1);
  if (pos_[slot].bucket != kInvalidIndex) {
    const Pos p = pos_[slot];
    if (buckets_[p.bucket].when_ns == when_ns) {
      buckets_[p.bucket].items[p.index].seq = seq;
      return;
    }
    remove(slot);
  }
  const std::uint32_t b = bucket_for(when_ns);
  Bucket& bucket = buckets_[b];
  pos_[slot] = Pos{.bucket = b, .index = static_cast<std::uint32_t>(bucket.items.size())};
  bucket.items.push_back(Item{.seq = seq, .slot = slot});
  ++size_;
}

void CompletionIndex::erase(std::uint32_t slot) {
  if (contains(slot)) remove(slot);
}

void CompletionIndex::drop_stale_top() {
  while (!heap_.empty() && stale(heap_.front())) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }
}

void CompletionIndex::rebuild_heap() {
  heap_.clear();
  for (std::uint32_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    if (bucket.live) heap_.push_back(TimeEntry{.when_ns = bucket.when_ns, .bucket = b, .generation = bucket.generation});
  }
  std::make_heap(heap_.begin(), heap_.end(), Later{});
}

std::int64_t CompletionIndex::earliest_ns() {
  MOFASIM_CHECK(size_ > 0, "completion index: earliest of an empty index");
  drop_stale_top();
  return heap_.front().when_ns;
}

void CompletionIndex::pop_earliest(std::vector<std::uint32_t>& out) {
  MOFASIM_CHECK(size_ > 0, "completion index: pop of an empty index");
  drop_stale_top();
  const std::int64_t when = heap_.front().when_ns;
  while (!heap_.empty() && heap_.front().when_ns == when) {
    const TimeEntry top = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
    if (stale(top)) continue;
    Bucket& bucket = buckets_[top.bucket];
    for (const Item& item : bucket.items) pos_[item.slot].bucket = kInvalidIndex;
    size_ -= bucket.items.size();
    merged_.insert(merged_.end(), bucket.items.begin(), bucket.items.end());
    free_bucket(top.bucket);
  }
  const auto by_seq = [](const Item& x, const Item& y) { return x.seq < y.seq; };
  if (!std::is_sorted(merged_.begin(), merged_.end(), by_seq)) std::sort(merged_.begin(), merged_.end(), by_seq);
  for (const Item& item : merged_) out.push_back(item.slot);
  merged_.clear();
}

}  // namespace mofasim::sim
