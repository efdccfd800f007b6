// The memory-fit fields of a hardware message (see validate_device_memory.h).
#include "sim/scenario/validate_device_memory.h"

#include "model/memory_reserve.h"

namespace mofasim::scenario {

void check_device_memory(const proto::Hardware& h, const std::string& p, bool memory_ok, const FieldFail& fail) {
  // Negative sizes never get here: the unit parser refuses them ("must not be negative").
  if (memory_ok && h.memory_reserved() >= h.gpu_memory()) {
    fail(p + ".memory_reserved",
         num(h.memory_reserved()) + " B leaves nothing of gpu_memory = " + num(h.gpu_memory()) + " B");
  } else if (memory_ok && h.cuda_context() + h.memory_reserved() >= h.gpu_memory()) {
    // Located at the field the scenario wrote: the context when given, else memory_reserved.
    if (h.has_cuda_context()) {
      fail(p + ".cuda_context", num(h.cuda_context()) + " B with memory_reserved = " + num(h.memory_reserved()) +
                                    " B leaves nothing of gpu_memory = " + num(h.gpu_memory()) + " B");
    } else {
      fail(p + ".memory_reserved", num(h.memory_reserved()) + " B with the default cuda_context = " +
                                       num(h.cuda_context()) + " B leaves nothing of gpu_memory = " +
                                       num(h.gpu_memory()) + " B");
    }
  }
  // Unit-less, so no unit parser sees it: the whole range is checked here.
  if (h.has_allocator_fragmentation() &&
      !(h.allocator_fragmentation() >= 0 && h.allocator_fragmentation() < model::kMaxAllocatorFragmentation)) {
    fail(p + ".allocator_fragmentation",
         "must be in [0, 0.9) (1 - allocated/reserved at the peak; 0.9 would reserve ten times what is allocated), "
         "got " + num(h.allocator_fragmentation()));
  }
}

}  // namespace mofasim::scenario
