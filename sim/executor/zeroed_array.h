// ZeroedArray<T>: a fixed-size, zero-initialised array of a trivial type for the replay's
// per-instance tables (hundreds of millions of entries at full fidelity on 16,384 GPUs).
//
// Why not std::vector: vector(n, 0) writes every element once before the replay writes it again,
// and faulting gigabytes in 4 KiB pages costs seconds on a virtual machine. Here a large array is
// an anonymous mapping (the kernel hands out zeroed pages on first touch, so there is no fill
// pass) with transparent huge pages requested, which cuts the page faults ~512 times. Small
// arrays, and systems without mmap, use operator new + memset.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define MOFASIM_HAVE_MMAP 1
#endif

namespace mofasim::executor {

template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "ZeroedArray holds trivial types only (all-zero bytes are its initial value)");

 public:
  ZeroedArray() = default;
  explicit ZeroedArray(std::size_t n) : size_(n) {
    if (n == 0) return;
    bytes_ = n * sizeof(T);
#ifdef MOFASIM_HAVE_MMAP
    if (bytes_ >= kMapThreshold) {
      void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
      (void)madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: without it the array still works
#endif
      data_ = static_cast<T*>(p);
      mapped_ = true;
      return;
    }
#endif
    data_ = static_cast<T*>(::operator new(bytes_));
    std::memset(static_cast<void*>(data_), 0, bytes_);
  }
  ZeroedArray(const ZeroedArray&) = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ZeroedArray(ZeroedArray&& o) noexcept { swap(o); }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    ZeroedArray(std::move(o)).swap(*this);
    return *this;
  }
  ~ZeroedArray() { release(); }

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  [[nodiscard]] T* data() { return data_; }
  [[nodiscard]] const T* data() const { return data_; }

 private:
  static constexpr std::size_t kMapThreshold = std::size_t{4} << 20;  // 4 MiB

  void swap(ZeroedArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_, o.mapped_);
  }
  void release() noexcept {
    if (data_ == nullptr) return;
#ifdef MOFASIM_HAVE_MMAP
    if (mapped_) {
      munmap(data_, bytes_);
      data_ = nullptr;
      return;
    }
#endif
    ::operator delete(data_);
    data_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace mofasim::executor
