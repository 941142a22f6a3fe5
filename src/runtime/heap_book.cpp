#include "heap_book.hpp"

#include <algorithm>

#include "symmem/error.hpp"
#include "symmem/heap.hpp"

namespace symmem::detail {

SpaceBook::SpaceBook(size_t chunk, size_t granularity, size_t align)
    : chunk_(checked_round_up(chunk, granularity, "heap chunk")), granularity_(granularity), align_(align) {
  require(granularity > 0 && align > 0 && granularity % align == 0, "SpaceBook: granularity must be a multiple of the alignment");
}

SpaceBook::Place SpaceBook::place(size_t bytes) {
  require(bytes > 0 && bytes % align_ == 0, "SpaceBook::place: size must be a positive multiple of the alignment");
  for (size_t a = 0; a < arenas_.size(); ++a) {
    auto& f = arenas_[a].free;
    for (auto it = f.begin(); it != f.end(); ++it) {
      if (it->second < bytes) continue;
      const size_t off = it->first, len = it->second;
      f.erase(it);
      if (len > bytes) f.emplace(off + bytes, len - bytes);
      return Place{static_cast<int>(a), off, 0};
    }
  }
  ArenaSpace s;
  s.bytes = std::max(chunk_, checked_round_up(bytes, granularity_, "heap arena"));
  if (s.bytes > bytes) s.free.emplace(bytes, s.bytes - bytes);
  arenas_.push_back(std::move(s));
  return Place{static_cast<int>(arenas_.size() - 1), 0, arenas_.back().bytes};
}

void SpaceBook::forget_arena(int arena) {
  require(arena == static_cast<int>(arenas_.size()) - 1, "SpaceBook::forget_arena: not the newest arena");
  arenas_.pop_back();
}

void SpaceBook::release(int arena, size_t offset, size_t bytes) {
  auto& s = arenas_.at(arena);
  require(!s.dropped && offset + bytes <= s.bytes, "SpaceBook::release: range outside its arena");
  auto& f = s.free;
  auto next = f.lower_bound(offset);
  require(next == f.end() || next->first >= offset + bytes, "SpaceBook::release: range overlaps free space (released twice?)");
  if (next != f.begin()) {
    auto prev = std::prev(next);
    require(prev->first + prev->second <= offset, "SpaceBook::release: range overlaps free space (released twice?)");
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      bytes += prev->second;
      f.erase(prev);
    }
  }
  if (next != f.end() && next->first == offset + bytes) {
    bytes += next->second;
    f.erase(next);
  }
  f.emplace(offset, bytes);
}

size_t SpaceBook::free_bytes(int arena) const {
  size_t n = 0;
  for (auto& r : arenas_.at(arena).free) n += r.second;
  return n;
}

int SpaceBook::droppable() const {
  for (size_t a = 0; a < arenas_.size(); ++a) {
    const auto& s = arenas_[a];
    if (!s.dropped && s.bytes > chunk_ && s.free.size() == 1 && s.free.begin()->second == s.bytes) return static_cast<int>(a);
  }
  return -1;
}

void SpaceBook::drop(int arena) {
  auto& s = arenas_.at(arena);
  s.dropped = true;
  s.free.clear();
}

}  // namespace symmem::detail
