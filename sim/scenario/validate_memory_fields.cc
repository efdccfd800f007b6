// Precision, sharding and recompute fields (see validate_memory_fields.h).
#include "sim/scenario/validate_memory_fields.h"

#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>

namespace mofasim::scenario {
namespace {

const char* dtype_name(proto::DType t) {
  switch (t) {
    case proto::BF16: return "bf16";
    case proto::FP16: return "fp16";
    case proto::FP8: return "fp8";
    case proto::FP32: return "fp32";
    case proto::DTYPE_UNSPECIFIED: break;
  }
  return "unspecified";
}

// `value` must be one of `allowed` (Megatron's choices for the option).
void one_of(proto::DType value, std::initializer_list<proto::DType> allowed, const std::string& path,
            const std::function<void(const std::string&, const std::string&)>& fail) {
  std::string names;
  for (proto::DType a : allowed) {
    if (a == value) return;
    names += (names.empty() ? "" : ", ") + std::string(dtype_name(a));
  }
  fail(path, std::string("must be one of ") + names + ", got " + dtype_name(value));
}

// torchtitan's selective_ac_option: 'op' (its per-op policy, modelled on dense Llama layers) or a
// layer frequency k >= 1, with selective granularity and without Megatron's module list.
void check_selective_ac_option(const proto::Scenario& s, bool selective,
                               const std::function<void(const std::string&, const std::string&)>& fail) {
  const proto::Optimizations& o = s.optimizations();
  const std::string path = "optimizations.selective_ac_option";
  const std::string& v = o.selective_ac_option();
  if (!selective) fail(path, "only with recompute_granularity: selective (torchtitan's mode: selective)");
  if (o.recompute_modules_size() > 0) fail(path, "give recompute_modules (Megatron) or selective_ac_option (torchtitan), not both");
  if (v == "op") {
    const proto::Model& m = s.model();
    if (s.has_model() && (m.has_moe() || m.attention() == proto::MLA || m.mlp() != proto::SWIGLU)) {
      fail(path, "'op' is modelled for dense Llama layers (SwiGLU MLP, MHA/GQA attention)");
    }
    return;
  }
  const bool digits = !v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(v) < 1) {
    fail(path, "must be 'op' or a layer frequency k >= 1 (at most 6 digits), got '" + v + "'");
  }
}

}  // namespace

void check_memory_fields(const proto::Scenario& s,
                         const std::function<void(const std::string& path, const std::string& message)>& fail) {
  const proto::Optimizations& o = s.optimizations();
  const proto::Optimizer& opt = o.optimizer();
  const std::string q = "optimizations.optimizer";
  one_of(opt.params_dtype(), {proto::BF16, proto::FP16, proto::FP32}, q + ".params_dtype", fail);
  one_of(opt.main_grads_dtype(), {proto::FP32, proto::BF16, proto::FP16}, q + ".main_grads_dtype", fail);
  one_of(opt.main_params_dtype(), {proto::FP32, proto::FP16}, q + ".main_params_dtype", fail);
  one_of(opt.state_dtype(), {proto::FP32, proto::BF16, proto::FP16, proto::FP8}, q + ".state_dtype", fail);
  if (opt.has_exp_avg_dtype()) {
    one_of(opt.exp_avg_dtype(), {proto::FP32, proto::BF16, proto::FP16, proto::FP8}, q + ".exp_avg_dtype", fail);
  }
  if (opt.has_exp_avg_sq_dtype()) {
    one_of(opt.exp_avg_sq_dtype(), {proto::FP32, proto::BF16, proto::FP16, proto::FP8}, q + ".exp_avg_sq_dtype", fail);
  }
  if (opt.has_data_parallel_sharding_strategy()) {
    const proto::DataParallelSharding z = opt.data_parallel_sharding_strategy();
    if (opt.has_distributed() && opt.distributed() != (z != proto::NO_SHARD)) {
      fail(q + ".data_parallel_sharding_strategy",
           std::string("contradicts distributed: ") + (opt.distributed() ? "true" : "false") +
               " (distributed: true is optim; give one of the two)");
    }
    if (z == proto::OPTIM_GRADS_PARAMS && opt.placement() == proto::CPU) {
      fail(q + ".data_parallel_sharding_strategy", "optim_grads_params with placement cpu is not supported");
    }
  }

  // HSDP: Megatron's partial distributed optimizer cuts the dp-cp and expert-DP groups evenly and
  // refuses it without the distributed optimizer ("Partial DistOpt cannot be used without DistOpt").
  if (opt.has_num_distributed_optimizer_instances()) {
    const std::int64_t n = opt.num_distributed_optimizer_instances();
    const std::string path = q + ".num_distributed_optimizer_instances";
    const bool sharded = (opt.has_data_parallel_sharding_strategy() && opt.data_parallel_sharding_strategy() != proto::NO_SHARD) ||
                         (!opt.has_data_parallel_sharding_strategy() && opt.distributed());
    const proto::Parallelism& x = s.parallelism();
    const std::int64_t dpcp = std::int64_t{x.dp()} * x.cp();
    if (n < 1) {
      fail(path, "must be at least 1, got " + std::to_string(n));
    } else if (n > 1 && !sharded) {
      fail(path, std::to_string(n) + " needs a sharded optimizer (data_parallel_sharding_strategy optim, optim_grads or "
                 "optim_grads_params): without sharding every rank already holds a replica");
    } else if (dpcp >= 1 && x.ep() >= 1 && dpcp % x.ep() == 0) {
      if (dpcp % n != 0) {
        fail(path, std::to_string(n) + " does not divide dp*cp = " + std::to_string(dpcp));
      } else if ((dpcp / x.ep()) % n != 0) {
        fail(path, std::to_string(n) + " does not divide the expert-DP size dp*cp/ep = " + std::to_string(dpcp / x.ep()));
      }
    }
  }

  // InternEvo's broadcast parameter sync is its ZeRO-1 over the whole DP group, on the GPU.
  if (opt.has_param_sync() && opt.param_sync() == proto::BROADCAST) {
    const std::string path = q + ".param_sync";
    const proto::DataParallelSharding level = opt.has_data_parallel_sharding_strategy() ? opt.data_parallel_sharding_strategy()
                                              : opt.distributed()                       ? proto::OPTIM
                                                                                        : proto::NO_SHARD;
    if (level != proto::OPTIM) {
      fail(path, "broadcast needs data_parallel_sharding_strategy optim (ZeRO-1; or distributed: true): "
                 "the owners broadcast the parameters they updated, which other strategies do not keep whole");
    } else if (opt.num_distributed_optimizer_instances() > 1) {
      fail(path, "broadcast needs num_distributed_optimizer_instances 1 (its ZeRO group is the whole DP group)");
    } else if (opt.placement() == proto::CPU) {
      fail(path, "broadcast needs placement gpu (allowed with placement cpu: all_gather)");
    }
  }

  // Recompute: the old `recompute` field and Megatron's granularity name the same choice.
  const std::string p = "optimizations";
  const bool has_granularity = o.has_recompute_granularity();
  if (has_granularity && o.has_recompute()) {
    const bool same = (o.recompute() == proto::SELECTIVE && o.recompute_granularity() == proto::GRANULARITY_SELECTIVE) ||
                      (o.recompute() == proto::FULL && o.recompute_granularity() == proto::GRANULARITY_FULL);
    if (!same) fail(p + ".recompute_granularity", "contradicts recompute (give one of the two)");
  }
  const bool selective = has_granularity ? o.recompute_granularity() == proto::GRANULARITY_SELECTIVE
                                         : o.recompute() == proto::SELECTIVE;
  const bool full = has_granularity ? o.recompute_granularity() == proto::GRANULARITY_FULL : o.recompute() == proto::FULL;
  if (o.recompute_modules_size() > 0 && !selective) {
    fail(p + ".recompute_modules", "only with recompute_granularity: selective");
  }
  if (o.has_recompute_method() && !full) fail(p + ".recompute_method", "only with recompute_granularity: full");
  if (o.has_recompute_num_layers()) {
    if (!full) {
      fail(p + ".recompute_num_layers", "only with recompute_granularity: full");
    } else if (o.recompute_method() != proto::RECOMPUTE_BLOCK && o.recompute_num_layers() < 1) {
      fail(p + ".recompute_num_layers", "must be at least 1 with recompute_method uniform, got " +
                                            std::to_string(o.recompute_num_layers()));
    } else if (o.recompute_num_layers() < 0) {
      fail(p + ".recompute_num_layers", "must be at least 0, got " + std::to_string(o.recompute_num_layers()));
    }
  }
  const bool moe = s.has_model() && s.model().has_moe();
  const bool mla = s.has_model() && s.model().attention() == proto::MLA;
  std::set<int> seen;
  for (int i = 0; i < o.recompute_modules_size(); ++i) {
    const proto::RecomputeModule m = o.recompute_modules(i);
    const std::string path = p + ".recompute_modules[" + std::to_string(i) + "]";
    if (!seen.insert(m).second) fail(path, "listed twice");
    if ((m == proto::RECOMPUTE_MOE || m == proto::RECOMPUTE_MOE_ACT || m == proto::RECOMPUTE_SHARED_EXPERTS) && s.has_model() && !moe) {
      fail(path, "needs a MoE model (model.moe)");
    }
    if (m == proto::RECOMPUTE_MLA_UP_PROJ && s.has_model() && !mla) fail(path, "needs model.attention: mla");
    if ((m == proto::RECOMPUTE_MOE || m == proto::RECOMPUTE_MOE_ACT) && o.memfine().enabled()) {
      fail(path, "MemFine (optimizations.memfine) already recomputes the experts; use one of the two");
    }
  }
  if (o.has_selective_ac_option()) check_selective_ac_option(s, selective, fail);
}

}  // namespace mofasim::scenario
