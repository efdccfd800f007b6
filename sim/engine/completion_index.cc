// CompletionIndex implementation: equal-time buckets, a hash from time to bucket, a lazy heap of times.
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
  const auto [it, inserted] = by_time_.try_emplace(when_ns, kInvalidIndex);
  if (inserted) {
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
    it->second = b;
    if (heap_.size() > 2 * by_time_.size() + 64) {
      rebuild_heap();  // includes the new bucket
    } else {
      heap_.push_back(TimeEntry{.when_ns = when_ns, .bucket = b});
      std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
  }
  last_bucket_ = it->second;
  return it->second;
}

void CompletionIndex::free_bucket(std::uint32_t b) {
  Bucket& bucket = buckets_[b];
  by_time_.erase(bucket.when_ns);
  bucket.live = false;
  bucket.items.clear();
  free_buckets_.push_back(b);
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
  for (const auto& [when, b] : by_time_) heap_.push_back(TimeEntry{.when_ns = when, .bucket = b});
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
  const std::uint32_t b = heap_.front().bucket;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
  Bucket& bucket = buckets_[b];
  const auto by_seq = [](const Item& x, const Item& y) { return x.seq < y.seq; };
  if (!std::is_sorted(bucket.items.begin(), bucket.items.end(), by_seq)) {
    std::sort(bucket.items.begin(), bucket.items.end(), by_seq);
  }
  for (const Item& item : bucket.items) {
    out.push_back(item.slot);
    pos_[item.slot].bucket = kInvalidIndex;
  }
  size_ -= bucket.items.size();
  free_bucket(b);
}

}  // namespace mofasim::sim
