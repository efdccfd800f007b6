// The catalogue of bad inputs of issue 16 (load-time half): every field limit, every derived
// budget, invalid UTF-8, unsupported schedules, HSDP sizes, and the classic reading errors,
// each as a scenario text plus `--set` overrides, the command the CLI test runs it through, and
// the EXACT first line it must be refused with. bad_input_catalogue_test.cc loads each in
// process; bad_input_cli_test.cc runs each through the mofasim binary under a time and memory
// limit and asserts exit status 2 and the same first line.
//
// The base scenario is written one section per line: 1 model, 2 hardware, 3 topology,
// 4 parallelism, 5 fault_tolerance, 6 training. `--set` errors are located as --set:N:col, N the
// override's position and col the 1-based column of the value inside "path=value".
#pragma once

#include <string>
#include <vector>

namespace mofasim::scenario::testing {

struct BadInput {
  std::string name;
  std::string yaml;                    // written to bad.yaml
  std::vector<std::string> overrides;  // --set arguments
  std::string command;                 // simulate, memory or ettr
  std::string first_line;              // the exact first line on stderr
};

struct BaseScenario {
  std::string model =
      "model: {num_layers: 4, hidden_size: 256, num_attention_heads: 8, num_kv_heads: 4, ffn_hidden_size: 1024, "
      "vocab_size: 1000, seq_length: 128}";
  std::string hardware = R"(hardware: {peak_bf16: "989 TFLOPS", gpu_memory: "80 GiB", hbm_bandwidth: "3.35 TB/s"})";
  std::string topology = R"(topology: {gpus: 8, intra_node: {bandwidth: "400 GB/s"}, inter_node: {bandwidth: "50 GB/s"}})";
  std::string parallelism = "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16}";
  std::string fault =
      R"(fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 100, save_time: "1 s"}})";
  std::string training = "training: {steps: 100}";

  [[nodiscard]] std::string text() const {
    return model + "\n" + hardware + "\n" + topology + "\n" + parallelism + "\n" + fault + "\n" + training + "\n";
  }
};

inline std::string base() { return BaseScenario{}.text(); }

// The base model with 8 routed experts (top 2) in every layer.
inline std::string moe_model() {
  return BaseScenario{}.model.substr(0, BaseScenario{}.model.size() - 1) +
         ", moe: {num_experts: 8, top_k: 2, expert_ffn_hidden_size: 128}}";
}

// The base with one section's line replaced ("model", "hardware", "topology", "parallelism",
// "fault" or "training").
inline std::string base_with(const std::string& section, const std::string& line) {
  BaseScenario b;
  std::string* target = section == "model"         ? &b.model
                        : section == "hardware"    ? &b.hardware
                        : section == "topology"    ? &b.topology
                        : section == "parallelism" ? &b.parallelism
                        : section == "fault"       ? &b.fault
                                                   : &b.training;
  *target = line;
  return b.text();
}

// "1,1,...,1": n entries of a YAML list.
inline std::string ones(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += i == 0 ? "1" : ",1";
  return out;
}

// "{name: c0},{name: c1},...": n failure classes.
inline std::string named_classes(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i == 0 ? "{name: c" : ",{name: c") + std::to_string(i) + "}";
  return out;
}

inline std::vector<BadInput> bad_inputs() {
  return {
      {"NumLayersBillion", base(), {"model.num_layers=1000000000"}, "simulate",
       "--set:1:18: model.num_layers: must be at most 10000 (bounds the per-layer op tables; the largest published models have under 200 layers), got 1000000000"},
      {"MicroBatchesBillion", base(), {"parallelism.global_batch=1000000000"}, "memory",
       "--set:1:26: parallelism.global_batch: must be at most 16777216 (2^24 sequences; with seq_length it keeps tokens per step exact), got 1000000000"},
      {"GpusInt32MaxWithMatchingLayout", base(), {"topology.gpus=2147483647", "parallelism.dp=536870911"}, "ettr",
       "--set:1:15: topology.gpus: must be at most 1048576 (2^20 GPUs; per-GPU tables are built for the whole job), got 2147483647"},
      {"StageLayersHuge", base(), {"parallelism.stage_layers=[2000000000, 1]"}, "simulate",
       "--set:1:27: parallelism.stage_layers[0]: must be at most 10000 (one entry per virtual stage, at most model.num_layers each), got 2000000000"},
      {"TpOverlapChunksBillion", base(), {"optimizations.tp_overlap.chunks=1000000000"}, "memory",
       "--set:1:33: optimizations.tp_overlap.chunks: must be at most 256 (each chunk is a separate op of every layer), got 1000000000"},
      {"MemFineChunksBillion", base(), {"optimizations.memfine.chunks=1000000000"}, "ettr",
       "--set:1:30: optimizations.memfine.chunks: must be at most 4096 (each chunk is a separate op of every MoE layer), got 1000000000"},
      {"VppMillion", base(), {"parallelism.vpp=1000000"}, "simulate",
       "--set:1:17: parallelism.vpp: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1000000"},
      {"DenormalBandwidth", base(), {"topology.intra_node.bandwidth=1e-310 B/s"}, "memory",
       "--set:1:31: topology.intra_node.bandwidth: must be at least 1e+06 B/s (below 1 MB/s is a unit typo; above 1e24 B/s a link is already free), got 1e-310 B/s"},
      {"SeqLengthInt32Max", base(), {"model.seq_length=2147483647"}, "ettr",
       "--set:1:18: model.seq_length: must be at most 16777216 (2^24 keeps the s^2 attention terms exact in 64-bit arithmetic), got 2147483647"},
      {"VocabInt32Max", base(), {"model.vocab_size=2147483647"}, "simulate",
       "--set:1:18: model.vocab_size: must be at most 16777216 (2^24 keeps the output-layer FLOP and byte counts exact), got 2147483647"},
      {"ExpertsBillion", base(), {"model.moe.num_experts=1000000000"}, "memory",
       "--set:1:23: model.moe.num_experts: must be at most 16384 (published MoE models route to at most a few hundred experts), got 1000000000"},
      {"MtpDepthBillion", base(), {"model.mtp_depth=1000000000"}, "ettr",
       "--set:1:17: model.mtp_depth: must be at most 16 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1000000000"},
      {"FailureRate1e308", base(), {"fault_tolerance.node_failure_rate_per_day=1e308"}, "simulate",
       "--set:1:43: fault_tolerance.node_failure_rate_per_day: must be at most 1000 (a failure unit failing more than every 90 s cannot make progress), got 1e+308"},
      {"CheckpointSave1e300Hours", base(), {"fault_tolerance.checkpoint.save_time=1e300 h"}, "memory",
       "--set:1:38: fault_tolerance.checkpoint.save_time: must be at most 3.2e+07 s (longer than a year is a typo in a per-event time), got 3.6e+303 s"},
      {"StepsInt64Max", base(), {"training.steps=9223372036854775807"}, "ettr",
       "--set:1:16: training.steps: must be at most 1000000000 (a billion steps; keeps step counts and timelines exact), got 9223372036854775807"},
      {"FailureUnitInt32Max", base(), {"fault_tolerance.gpus_per_failure_unit=2147483647"}, "simulate",
       "--set:1:39: fault_tolerance.gpus_per_failure_unit: must be at most 1048576 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2147483647"},
      {"Max_model_hidden_size", base(), {"model.hidden_size=1048577"}, "memory",
       "--set:1:19: model.hidden_size: must be at most 1048576 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1048577"},
      {"Max_model_num_attention_heads", base(), {"model.num_attention_heads=65537"}, "ettr",
       "--set:1:27: model.num_attention_heads: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 65537"},
      {"Max_model_num_kv_heads", base(), {"model.num_kv_heads=100000"}, "simulate",
       "--set:1:20: model.num_kv_heads: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 100000"},
      {"Max_model_head_dim", base(), {"model.head_dim=70000"}, "memory",
       "--set:1:16: model.head_dim: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 70000"},
      {"Max_model_ffn_hidden_size", base(), {"model.ffn_hidden_size=16777217"}, "ettr",
       "--set:1:23: model.ffn_hidden_size: must be at most 16777216 (keeps the simulator's tables and 64-bit arithmetic bounded), got 16777217"},
      {"Max_model_mla_q_lora_rank", base(), {"model.mla.q_lora_rank=65537"}, "simulate",
       "--set:1:23: model.mla.q_lora_rank: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 65537"},
      {"Max_model_mla_kv_lora_rank", base(), {"model.mla.kv_lora_rank=1000000"}, "memory",
       "--set:1:24: model.mla.kv_lora_rank: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1000000"},
      {"Max_model_mla_qk_nope_head_dim", base(), {"model.mla.qk_nope_head_dim=99999"}, "ettr",
       "--set:1:28: model.mla.qk_nope_head_dim: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 99999"},
      {"Max_model_mla_qk_rope_head_dim", base(), {"model.mla.qk_rope_head_dim=99999"}, "simulate",
       "--set:1:28: model.mla.qk_rope_head_dim: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 99999"},
      {"Max_model_mla_v_head_dim", base(), {"model.mla.v_head_dim=99999"}, "memory",
       "--set:1:22: model.mla.v_head_dim: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 99999"},
      {"Max_model_moe_top_k", base(), {"model.moe.top_k=20000"}, "ettr",
       "--set:1:17: model.moe.top_k: must be at most 16384 (keeps the simulator's tables and 64-bit arithmetic bounded), got 20000"},
      {"Max_model_moe_expert_ffn_hidden_size", base(), {"model.moe.expert_ffn_hidden_size=20000000"}, "simulate",
       "--set:1:34: model.moe.expert_ffn_hidden_size: must be at most 16777216 (keeps the simulator's tables and 64-bit arithmetic bounded), got 20000000"},
      {"Max_model_moe_num_shared_experts", base(), {"model.moe.num_shared_experts=2000"}, "memory",
       "--set:1:30: model.moe.num_shared_experts: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2000"},
      {"Max_model_moe_shared_expert_ffn_hidden_size", base(), {"model.moe.shared_expert_ffn_hidden_size=20000000"}, "ettr",
       "--set:1:41: model.moe.shared_expert_ffn_hidden_size: must be at most 16777216 (keeps the simulator's tables and 64-bit arithmetic bounded), got 20000000"},
      {"Max_model_moe_first_k_dense_layers", base(), {"model.moe.first_k_dense_layers=10001"}, "simulate",
       "--set:1:32: model.moe.first_k_dense_layers: must be at most 10000 (keeps the simulator's tables and 64-bit arithmetic bounded), got 10001"},
      {"Max_model_moe_load_imbalance", base(), {"model.moe.load_imbalance=1e6"}, "memory",
       "--set:1:26: model.moe.load_imbalance: must be at most 16384 (the busiest rank holds at most every token), got 1e+06"},
      {"Max_model_moe_dispatch_bytes_per_element", base(), {"model.moe.dispatch_bytes_per_element=16"}, "ettr",
       "--set:1:38: model.moe.dispatch_bytes_per_element: must be at most 8 (far outside any measured value; keeps derived times finite), got 16"},
      {"Max_model_moe_combine_bytes_per_element", base(), {"model.moe.combine_bytes_per_element=9"}, "simulate",
       "--set:1:37: model.moe.combine_bytes_per_element: must be at most 8 (far outside any measured value; keeps derived times finite), got 9"},
      {"Max_hardware_peak_bf16", base(), {"hardware.peak_bf16=1e21 FLOPS"}, "memory",
       "--set:1:20: hardware.peak_bf16: must be at most 1e+18 FLOP/s (outside any real device; keeps every derived time finite), got 1e+21 FLOP/s"},
      {"Max_hardware_peak_fp8", base(), {"hardware.peak_fp8=2 EFLOPS"}, "ettr",
       "--set:1:19: hardware.peak_fp8: must be at most 1e+18 FLOP/s (outside any real device; keeps every derived time finite), got 2e+18 FLOP/s"},
      {"Max_hardware_peak_fp32", base(), {"hardware.peak_fp32=1e19 FLOPS"}, "simulate",
       "--set:1:20: hardware.peak_fp32: must be at most 1e+18 FLOP/s (outside any real device; keeps every derived time finite), got 1e+19 FLOP/s"},
      {"Max_hardware_gpu_memory", base(), {"hardware.gpu_memory=2 PB"}, "memory",
       "--set:1:21: hardware.gpu_memory: must be at most 1e+15 B (outside any real device; keeps every derived time finite), got 2e+15 B"},
      {"Max_hardware_memory_reserved", base(), {"hardware.memory_reserved=5 PB"}, "ettr",
       "--set:1:26: hardware.memory_reserved: must be at most 1e+15 B (outside any real device; keeps every derived time finite), got 5e+15 B"},
      {"Negative_hardware_cuda_context", base(), {"hardware.cuda_context=-1 GiB"}, "memory",
       "--set:1:23: hardware.cuda_context: must not be negative, got '-1 GiB'"},
      {"Hardware_cuda_context_fills_gpu_memory", base(), {"hardware.gpu_memory=1 GiB", "hardware.cuda_context=768 MiB", "hardware.memory_reserved=256 MiB"}, "simulate",
       "--set:2:23: hardware.cuda_context: 805306368 B with memory_reserved = 268435456 B leaves nothing of gpu_memory = 1073741824 B"},
      {"Hardware_memory_reserved_and_default_context_fill_gpu_memory", base_with("hardware", "hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"80 GiB\", hbm_bandwidth: \"3.35 TB/s\", memory_reserved: \"79.9 GiB\"}"), {}, "memory",
       "bad.yaml:2:104: hardware.memory_reserved: 85791971737.6 B with the default cuda_context = 287047680 B leaves nothing of gpu_memory = 85899345920 B"},
      {"Hardware_allocator_fragmentation_at_0_9", base(), {"hardware.allocator_fragmentation=0.9"}, "ettr",
       "--set:1:34: hardware.allocator_fragmentation: must be in [0, 0.9) (1 - allocated/reserved at the peak; 0.9 would reserve ten times what is allocated), got 0.9"},
      {"Hardware_allocator_fragmentation_negative", base(), {"hardware.allocator_fragmentation=-0.1"}, "memory",
       "--set:1:34: hardware.allocator_fragmentation: must not be negative, got '-0.1'"},
      {"Hardware_allocator_unknown", base(), {"hardware.allocator=cachin"}, "simulate",
       "--set:1:20: hardware.allocator: unknown allocator 'cachin'; did you mean 'caching'?"},
      {"Max_hardware_hbm_bandwidth", base(), {"hardware.hbm_bandwidth=1e16 B/s"}, "simulate",
       "--set:1:24: hardware.hbm_bandwidth: must be at most 1e+15 B/s (outside any real device; keeps every derived time finite), got 1e+16 B/s"},
      {"Max_hardware_h2d_bandwidth", base(), {"hardware.h2d_bandwidth=1e20 B/s"}, "memory",
       "--set:1:24: hardware.h2d_bandwidth: must be at most 1e+15 B/s (outside any real device; keeps every derived time finite), got 1e+20 B/s"},
      {"Max_hardware_d2h_bandwidth", base(), {"hardware.d2h_bandwidth=1e20 B/s"}, "ettr",
       "--set:1:24: hardware.d2h_bandwidth: must be at most 1e+15 B/s (outside any real device; keeps every derived time finite), got 1e+20 B/s"},
      {"Max_hardware_host_memory", base(), {"hardware.host_memory=1e16 B"}, "simulate",
       "--set:1:22: hardware.host_memory: must be at most 1e+15 B (outside any real device; keeps every derived time finite), got 1e+16 B"},
      {"Max_hardware_cpu_optimizer_params_per_second", base(), {"hardware.cpu_optimizer_params_per_second=1e16"}, "memory",
       "--set:1:42: hardware.cpu_optimizer_params_per_second: must be at most 1e+15 (far outside any measured value; keeps derived times finite), got 1e+16"},
      {"Max_hardware_disk_read_bandwidth", base(), {"hardware.disk_read_bandwidth=1e16 B/s"}, "ettr",
       "--set:1:30: hardware.disk_read_bandwidth: must be at most 1e+15 B/s (outside any real device; keeps every derived time finite), got 1e+16 B/s"},
      {"Max_hardware_disk_write_bandwidth", base(), {"hardware.disk_write_bandwidth=1e16 B/s"}, "simulate",
       "--set:1:31: hardware.disk_write_bandwidth: must be at most 1e+15 B/s (outside any real device; keeps every derived time finite), got 1e+16 B/s"},
      {"Max_hardware_kernel_launch", base(), {"hardware.kernel_launch=2 s"}, "memory",
       "--set:1:24: hardware.kernel_launch: must be at most 1 s (a per-kernel or per-message time over a second is a unit typo), got 2 s"},
      {"Max_hardware_op_dispatch", base(), {"hardware.op_dispatch=1 h"}, "ettr",
       "--set:1:22: hardware.op_dispatch: must be at most 1 s (a per-kernel or per-message time over a second is a unit typo), got 3600 s"},
      {"Max_hardware_roofline_slope", base(), {"hardware.roofline_slope=1e19"}, "simulate",
       "--set:1:25: hardware.roofline_slope: must be at most 1e+18 (far outside any measured value; keeps derived times finite), got 1e+19"},
      {"Max_hardware_roofline_intercept", base(), {"hardware.roofline_intercept=1e19 FLOPS"}, "memory",
       "--set:1:29: hardware.roofline_intercept: must be at most 1e+18 FLOP/s (outside any real device; keeps every derived time finite), got 1e+19 FLOP/s"},
      {"Max_topology_gpus_per_node", base(), {"topology.gpus_per_node=1025"}, "ettr",
       "--set:1:24: topology.gpus_per_node: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1025"},
      {"Max_topology_nodes_per_supernode", base(), {"topology.nodes_per_supernode=2000000"}, "simulate",
       "--set:1:30: topology.nodes_per_supernode: must be at most 1048576 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2000000"},
      {"Max_topology_nics_per_node", base(), {"topology.nics_per_node=4096"}, "memory",
       "--set:1:24: topology.nics_per_node: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 4096"},
      {"Max_topology_intra_node_latency", base(), {"topology.intra_node.latency=2 s"}, "ettr",
       "--set:1:29: topology.intra_node.latency: must be at most 1 s (a per-kernel or per-message time over a second is a unit typo), got 2 s"},
      {"Max_topology_inter_node_bandwidth", base(), {"topology.inter_node.bandwidth=1e25 B/s"}, "simulate",
       "--set:1:31: topology.inter_node.bandwidth: must be at most 1e+24 B/s (below 1 MB/s is a unit typo; above 1e24 B/s a link is already free), got 1e+25 B/s"},
      {"Max_topology_inter_supernode_latency", base(), {"topology.inter_supernode.latency=1 d"}, "memory",
       "--set:1:34: topology.inter_supernode.latency: must be at most 1 s (a per-kernel or per-message time over a second is a unit typo), got 86400 s"},
      {"Max_topology_oversubscription", base(), {"topology.oversubscription=1e6"}, "ettr",
       "--set:1:27: topology.oversubscription: must be at most 1024 (far outside any measured value; keeps derived times finite), got 1e+06"},
      {"Max_parallelism_tp", base(), {"parallelism.tp=2048"}, "simulate",
       "--set:1:16: parallelism.tp: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2048"},
      {"Max_parallelism_cp", base(), {"parallelism.cp=4096"}, "memory",
       "--set:1:16: parallelism.cp: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 4096"},
      {"Max_parallelism_pp", base(), {"parallelism.pp=1025"}, "ettr",
       "--set:1:16: parallelism.pp: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 1025"},
      {"Max_parallelism_dp", base(), {"parallelism.dp=2000000"}, "simulate",
       "--set:1:16: parallelism.dp: must be at most 1048576 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2000000"},
      {"Max_parallelism_ep", base(), {"parallelism.ep=20000"}, "memory",
       "--set:1:16: parallelism.ep: must be at most 16384 (keeps the simulator's tables and 64-bit arithmetic bounded), got 20000"},
      {"Max_parallelism_etp", base(), {"parallelism.etp=2048"}, "ettr",
       "--set:1:17: parallelism.etp: must be at most 1024 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2048"},
      {"Max_parallelism_micro_batch", base(), {"parallelism.micro_batch=65537"}, "simulate",
       "--set:1:25: parallelism.micro_batch: must be at most 65536 (keeps the simulator's tables and 64-bit arithmetic bounded), got 65537"},
      {"Max_optimizations_cp_overlap_chunks", base(), {"optimizations.cp_overlap.chunks=257"}, "memory",
       "--set:1:33: optimizations.cp_overlap.chunks: must be at most 256 (each chunk is a separate op of every layer), got 257"},
      {"Max_optimizations_ep_overlap_alpha", base(), {"optimizations.ep_overlap.alpha=1e9"}, "ettr",
       "--set:1:32: optimizations.ep_overlap.alpha: must be at most 1000 (far outside any measured value; keeps derived times finite), got 1e+09"},
      {"Max_optimizations_dp_overlap_beta", base(), {"optimizations.dp_overlap.beta=1001"}, "simulate",
       "--set:1:31: optimizations.dp_overlap.beta: must be at most 1000 (far outside any measured value; keeps derived times finite), got 1001"},
      {"Max_optimizations_activation_offload_alpha", base(), {"optimizations.activation_offload.alpha=5000"}, "memory",
       "--set:1:40: optimizations.activation_offload.alpha: must be at most 1000 (far outside any measured value; keeps derived times finite), got 5000"},
      {"Max_optimizations_activation_offload_beta_backward", base(), {"optimizations.activation_offload.beta_backward=1e300"}, "ettr",
       "--set:1:48: optimizations.activation_offload.beta_backward: must be at most 1000 (far outside any measured value; keeps derived times finite), got 1e+300"},
      {"Max_optimizations_compute_scale", base(), {"optimizations.compute_scale=1e6"}, "simulate",
       "--set:1:29: optimizations.compute_scale: must be at most 1000 (far outside any measured value; keeps derived times finite), got 1e+06"},
      {"Max_optimizations_bandwidth_scale", base(), {"optimizations.bandwidth_scale=1e300"}, "memory",
       "--set:1:31: optimizations.bandwidth_scale: must be at most 1000 (far outside any measured value; keeps derived times finite), got 1e+300"},
      {"Max_optimizations_dp_bucket_size", base(), {"optimizations.dp_bucket_size=1e18 B"}, "ettr",
       "--set:1:30: optimizations.dp_bucket_size: must be at most 1e+15 B (outside any real device; keeps every derived time finite), got 1e+18 B"},
      {"Max_fault_tolerance_downtime_per_failure", base(), {"fault_tolerance.downtime_per_failure=1e9 s"}, "simulate",
       "--set:1:38: fault_tolerance.downtime_per_failure: must be at most 3.2e+07 s (longer than a year is a typo in a per-event time), got 1e+09 s"},
      {"Max_fault_tolerance_init_time", base(), {"fault_tolerance.init_time=1e10 s"}, "memory",
       "--set:1:27: fault_tolerance.init_time: must be at most 3.2e+07 s (longer than a year is a typo in a per-event time), got 1e+10 s"},
      {"Max_fault_tolerance_weibull_shape", base(), {"fault_tolerance.weibull_shape=1000"}, "ettr",
       "--set:1:31: fault_tolerance.weibull_shape: must be at most 100 (far outside any measured value; keeps derived times finite), got 1000"},
      {"Max_fault_tolerance_step_time", base(), {"fault_tolerance.step_time=1e8 s"}, "simulate",
       "--set:1:27: fault_tolerance.step_time: must be at most 3.2e+07 s (longer than a year is a typo in a per-event time), got 1e+08 s"},
      {"Max_fault_tolerance_checkpoint_interval_steps", base(), {"fault_tolerance.checkpoint.interval_steps=2000000000"}, "memory",
       "--set:1:43: fault_tolerance.checkpoint.interval_steps: must be at most 1000000000 (keeps the simulator's tables and 64-bit arithmetic bounded), got 2000000000"},
      {"Max_fault_tolerance_checkpoint_snapshot_time", base(), {"fault_tolerance.checkpoint.snapshot_time=1e12 s"}, "ettr",
       "--set:1:42: fault_tolerance.checkpoint.snapshot_time: must be at most 3.2e+07 s (longer than a year is a typo in a per-event time), got 1e+12 s"},
      {"Max_training_tokens", base(), {"training.tokens=1e30"}, "simulate",
       "--set:1:17: training.tokens: must be at most 1e+18 (far outside any measured value; keeps derived times finite), got 1e+30"},
      {"Max_training_steps", base(), {"training.steps=1000000001"}, "memory",
       "--set:1:16: training.steps: must be at most 1000000000 (a billion steps; keeps step counts and timelines exact), got 1000000001"},
      {"Min_hardware_peak_bf16", base(), {"hardware.peak_bf16=1 FLOPS"}, "ettr",
       "--set:1:20: hardware.peak_bf16: must be at least 1e+09 FLOP/s (outside any real device; keeps every derived time finite), got 1 FLOP/s"},
      {"Min_hardware_peak_fp8", base(), {"hardware.peak_fp8=1e-300 FLOPS"}, "simulate",
       "--set:1:19: hardware.peak_fp8: must be at least 1e+09 FLOP/s (outside any real device; keeps every derived time finite), got 1e-300 FLOP/s"},
      {"Min_hardware_gpu_memory", base(), {"hardware.gpu_memory=1 KiB"}, "memory",
       "--set:1:21: hardware.gpu_memory: must be at least 1048576 B (outside any real device; keeps every derived time finite), got 1024 B"},
      {"Min_hardware_hbm_bandwidth", base(), {"hardware.hbm_bandwidth=1 B/s"}, "ettr",
       "--set:1:24: hardware.hbm_bandwidth: must be at least 1e+06 B/s (outside any real device; keeps every derived time finite), got 1 B/s"},
      {"Min_hardware_host_memory", base(), {"hardware.host_memory=1 B"}, "simulate",
       "--set:1:22: hardware.host_memory: must be at least 1048576 B (outside any real device; keeps every derived time finite), got 1 B"},
      {"Min_hardware_disk_read_bandwidth", base(), {"hardware.disk_read_bandwidth=1e-320 B/s"}, "memory",
       "--set:1:30: hardware.disk_read_bandwidth: must be at least 1e+06 B/s (outside any real device; keeps every derived time finite), got 1e-320 B/s"},
      {"Min_hardware_efficiency_gemm", base(), {"hardware.efficiency.gemm=1e-300"}, "ettr",
       "--set:1:26: hardware.efficiency.gemm: must be at least 1e-06 (far outside any measured value; keeps derived times finite), got 1e-300"},
      {"Min_hardware_efficiency_memory", base(), {"hardware.efficiency.memory=1e-9"}, "simulate",
       "--set:1:28: hardware.efficiency.memory: must be at least 1e-06 (far outside any measured value; keeps derived times finite), got 1e-09"},
      {"Min_topology_inter_node_bandwidth", base(), {"topology.inter_node.bandwidth=5e-324 B/s"}, "memory",
       "--set:1:31: topology.inter_node.bandwidth: must be at least 1e+06 B/s (below 1 MB/s is a unit typo; above 1e24 B/s a link is already free), got 5e-324 B/s"},
      {"Min_topology_bandwidth_decay", base(), {"topology.bandwidth_decay=1e-200"}, "ettr",
       "--set:1:26: topology.bandwidth_decay: must be at least 1e-06 (far outside any measured value; keeps derived times finite), got 1e-200"},
      {"Min_optimizations_compute_scale", base(), {"optimizations.compute_scale=1e-310"}, "simulate",
       "--set:1:29: optimizations.compute_scale: must be at least 1e-06 (far outside any measured value; keeps derived times finite), got 1e-310"},
      {"Min_optimizations_bandwidth_scale", base(), {"optimizations.bandwidth_scale=1e-9"}, "memory",
       "--set:1:31: optimizations.bandwidth_scale: must be at least 1e-06 (far outside any measured value; keeps derived times finite), got 1e-09"},
      {"Min_fault_tolerance_weibull_shape", base(), {"fault_tolerance.weibull_shape=0.001"}, "ettr",
       "--set:1:31: fault_tolerance.weibull_shape: must be at least 0.01 (far outside any measured value; keeps derived times finite), got 0.001"},
      {"Min_hardware_cpu_optimizer_params_per_second", base(), {"hardware.cpu_optimizer_params_per_second=0.5"}, "simulate",
       "--set:1:42: hardware.cpu_optimizer_params_per_second: must be at least 1 (far outside any measured value; keeps derived times finite), got 0.5"},
      {"InterleavedWithOnePipelineStage", base(), {"parallelism.schedule=interleaved-1f1b", "parallelism.vpp=2", "parallelism.pp=1", "parallelism.dp=4"}, "memory",
       "--set:3:16: parallelism.pp: interleaved-1f1b needs pp > 1 (one stage has nothing to interleave; use 1f1b), got 1"},
      // MoE parallel folding, node-limited routing and capacity (issue 13): model.moe with 8 experts.
      {"MoeEpNotDividingFoldedGroup", base_with("model", moe_model()), {"parallelism.ep=8"}, "simulate",
       "--set:1:16: parallelism.ep: ep*etp = 8*1 = 8 does not divide the folded group tp*cp*dp = 4"},
      {"MoeEtpNotDividingExpertFfn", base_with("model", moe_model()),
       {"model.moe.expert_ffn_hidden_size=130", "parallelism.etp=4"}, "memory",
       "--set:2:17: parallelism.etp: 4 does not divide model.moe.expert_ffn_hidden_size = 130 (each expert's FFN is split over etp ranks)"},
      {"MoeNodeLimitAboveEpNodes", base_with("model", moe_model()),
       {"parallelism.ep=4", "model.moe.router_num_groups=4", "model.moe.router_group_topk=2"}, "ettr",
       "--set:3:29: model.moe.router_group_topk: 2 exceeds the nodes one EP group spans (1 with ep = 4 and topology.gpus_per_node = 8)"},
      {"MoePadWithoutCapacity", base_with("model", moe_model()), {"model.moe.pad_expert_input_to_capacity=true"}, "simulate",
       "--set:1:40: model.moe.pad_expert_input_to_capacity: needs expert_capacity_factor (the capacity to pad to)"},
      {"MoeFoldedPipelineGroupsDiffer", base_with("model", moe_model()),
       {"parallelism.rank_order=tp-pp-cp-ep-dp", "parallelism.ep=4"}, "simulate",
       "--set:1:24: parallelism.rank_order: 'tp-pp-cp-ep-dp' does not end in pp, so Megatron needs the expert-DP size tp*cp*dp/(ep*etp) = 1 to equal dp = 2 (the attention and MoE layers' data-parallel sizes must match)"},
      {"MoeRouterGroupsNotDividingExperts", base_with("model", moe_model()),
       {"model.moe.router_num_groups=3", "model.moe.router_group_topk=1"}, "ettr",
       "--set:1:29: model.moe.router_num_groups: 3 does not divide num_experts = 8"},
      // DeepEP: a dispatcher group of 12 ranks is neither one node (<= 8) nor whole nodes of 8.
      {"MoeDeepEpGroupNotWholeNodes", base_with("model", moe_model()),
       {"topology.gpus=24", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=24", "parallelism.global_batch=24",
        "model.moe.num_experts=12", "model.moe.token_dispatcher_type=flex", "parallelism.ep=12"}, "simulate",
       "--set:8:16: parallelism.ep: token_dispatcher_type flex (DeepEP) needs the dispatcher group ep*etp = 12*1 = 12 to be at most 8 ranks (one node) or a multiple of 8 (whole nodes of 8 NVLink peers)"},
      // DeepEP placement: ep outermost strides the 8-rank group over 2 nodes of 8 (4 each); nodes of 4
      // split it in two; ep*etp = 6 in order crosses the 8-GPU node boundary at GPUs 6..11.
      {"MoeDeepEpGroupStridedByRankOrder", base_with("model", moe_model()),
       {"topology.gpus=16", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16", "model.moe.token_dispatcher_type=flex",
        "parallelism.ep=8", "parallelism.rank_order=tp-cp-dp-ep-pp"}, "simulate",
       "--set:7:24: parallelism.rank_order: 'tp-cp-dp-ep-pp' places the flex (DeepEP) dispatcher group ep*etp = 8*1 = 8 ranks on GPUs 0, 2, 4, 6, 8, 10, 12, 14 on 2 nodes of topology.gpus_per_node = 8; DeepEP needs it inside one node (at most 8 ranks) or on whole nodes, 8 ranks on each node at the same local GPUs (NUM_MAX_NVL_PEERS = 8 NVLink peers per RDMA rank), as Megatron's order tp-cp-ep-dp-pp places it"},
      {"MoeDeepEpGroupOverNodesOfFour", base_with("model", moe_model()),
       {"topology.gpus=16", "topology.gpus_per_node=4", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=16",
        "model.moe.token_dispatcher_type=flex", "parallelism.ep=8"}, "memory",
       "--set:2:24: topology.gpus_per_node: 4 GPUs per node place the flex (DeepEP) dispatcher group ep*etp = 8*1 = 8 ranks on GPUs 0, 1, 2, 3, 4, 5, 6, 7 on 2 nodes; DeepEP needs it inside one node (at most 8 ranks) or on whole nodes, 8 ranks on each node at the same local GPUs (NUM_MAX_NVL_PEERS = 8 NVLink peers per RDMA rank)"},
      {"MoeDeepEpGroupAcrossANodeBoundary", base_with("model", moe_model()),
       {"topology.gpus=24", "parallelism.tp=1", "parallelism.pp=1", "parallelism.dp=24", "parallelism.global_batch=24",
        "model.moe.num_experts=6", "model.moe.token_dispatcher_type=flex", "parallelism.ep=3", "parallelism.etp=2"}, "ettr",
       "--set:8:16: parallelism.ep: the flex (DeepEP) dispatcher group ep*etp = 3*2 = 6 ranks lies on GPUs 6, 7, 8, 9, 10, 11 on 2 nodes of topology.gpus_per_node = 8; DeepEP needs it inside one node (at most 8 ranks) or on whole nodes, 8 ranks on each node at the same local GPUs (NUM_MAX_NVL_PEERS = 8 NVLink peers per RDMA rank): use an ep*etp that divides 8 or is a multiple of 8"},
      {"HsdpInstancesNotDividingDp", base(), {"optimizations.optimizer.distributed=true", "optimizations.optimizer.num_distributed_optimizer_instances=4"}, "ettr",
       "--set:2:61: optimizations.optimizer.num_distributed_optimizer_instances: 4 does not divide dp*cp = 2"},
      {"HsdpWithoutSharding", base(), {"optimizations.optimizer.num_distributed_optimizer_instances=2"}, "simulate",
       "--set:1:61: optimizations.optimizer.num_distributed_optimizer_instances: 2 needs a sharded optimizer (data_parallel_sharding_strategy optim, optim_grads or optim_grads_params): without sharding every rank already holds a replica"},
      {"BroadcastSyncWithoutZeroOne", base(), {"optimizations.optimizer.param_sync=broadcast"}, "simulate",
       "--set:1:36: optimizations.optimizer.param_sync: broadcast needs data_parallel_sharding_strategy optim (ZeRO-1; or distributed: true): the owners broadcast the parameters they updated, which other strategies do not keep whole"},
      {"BroadcastSyncWithHsdp", base(), {"optimizations.optimizer.distributed=true", "optimizations.optimizer.param_sync=broadcast", "optimizations.optimizer.num_distributed_optimizer_instances=2"}, "ettr",
       "--set:2:36: optimizations.optimizer.param_sync: broadcast needs num_distributed_optimizer_instances 1 (its ZeRO group is the whole DP group)"},
      {"BroadcastSyncOnCpu", base(), {"optimizations.optimizer.distributed=true", "optimizations.optimizer.param_sync=broadcast", "optimizations.optimizer.placement=cpu", "hardware.cpu_optimizer_params_per_second=1e9", "hardware.h2d_bandwidth=20 GB/s", "hardware.d2h_bandwidth=20 GB/s"}, "memory",
       "--set:2:36: optimizations.optimizer.param_sync: broadcast needs placement gpu (allowed with placement cpu: all_gather)"},
      {"TasksPerStepBudget", base(), {"model.num_layers=10000", "parallelism.global_batch=65536"}, "memory",
       "--set:2:26: parallelism.global_batch: an estimated 26214400000 simulator tasks per step (m = 32768 micro-batches x 10000 layers x 2 passes x 40 ops), about 3125 GiB of replay tables, exceed the budget of 2e+07 tasks; use fewer micro-batches or layers"},
      {"TasksPerStepBudgetWithChunks", base(), {"model.num_layers=2000", "parallelism.global_batch=4096", "optimizations.tp_overlap.chunks=256"}, "ettr",
       "--set:2:26: parallelism.global_batch: an estimated 17039360000 simulator tasks per step (m = 2048 micro-batches x 2000 layers x 2 passes x 2080 ops), about 2031 GiB of replay tables, exceed the budget of 2e+07 tasks; use fewer micro-batches or layers"},
      {"TrialEventsBudgetFromCheckpoints", base(), {"training.steps=1000000000", "fault_tolerance.checkpoint.interval_steps=1"}, "simulate",
       "bad.yaml:5:18: fault_tolerance: an estimated 1e+09 events per Monte Carlo trial (checkpoints plus expected failures over 1e+09 steps) exceed the budget of 1e+08; checkpoint less often or train for fewer steps"},
      {"TrialEventsBudgetFromFailures", base(), {"training.steps=100000000", "fault_tolerance.step_time=1 d", "fault_tolerance.node_failure_rate_per_day=100", "fault_tolerance.checkpoint.interval_steps=1000000"}, "memory",
       "bad.yaml:5:18: fault_tolerance: an estimated 10000000100 events per Monte Carlo trial (checkpoints plus expected failures over 1e+08 steps) exceed the budget of 1e+08; checkpoint less often or train for fewer steps"},
      {"StepsFromTokensOverLimit", base_with("training", "training: {tokens: 1e17}"), {}, "ettr",
       "bad.yaml:6:20: training.tokens: 1e+17 tokens give 4.8828125e+13 steps, more than the limit of 1e9 steps"},
      {"StagesLongerThanLimit", base_with("parallelism", "parallelism: {tp: 2, pp: 2, dp: 2, global_batch: 16, stage_layers: [" + ones(65536) + "]}"), {}, "simulate",
       "bad.yaml:4:68: parallelism.stage_layers: has 65536 entries, at most 65535 allowed (one entry per virtual stage, at most model.num_layers each)"},
      {"FailureClassesTooMany", base(), {"fault_tolerance.failure_classes=[" + named_classes(257) + "]"}, "memory",
       "--set:1:33: fault_tolerance.failure_classes: has 257 entries, at most 256 allowed (keeps the simulator's tables and 64-bit arithmetic bounded)"},
      {"InvalidUtf8InFileName", base_with("training", "training: {steps: 100}\nname: \"caf\xe9\""), {}, "ettr",
       "bad.yaml:7:7: name: expected a string, got text that is not valid UTF-8"},
      {"InvalidUtf8InFileKey", base_with("training", "training: {steps: 100}\n\xff: 1"), {}, "simulate",
       "bad.yaml:7:1: (top level): keys must be field names, got text that is not valid UTF-8"},
      {"InvalidUtf8InFileDescription", base_with("training", "description: \xe2\x82\ntraining: {steps: 100}"), {}, "memory",
       "bad.yaml:6:14: description: expected a string, got text that is not valid UTF-8"},
      {"SamplesTooMany", base_with("fault", "fault_tolerance: {node_failure_rate_per_day: 0.005, failure_classes: [{name: a, weight: 1, "
                 "distribution: empirical, samples: [" + ones(100001) + "]}]}"), {}, "ettr",
       "bad.yaml:5:126: fault_tolerance.failure_classes[0].samples: has 100001 entries, at most 100000 allowed (far outside any measured value; keeps derived times finite)"},
      {"InvalidUtf8Name", base(), {"name=caf\xe9"}, "simulate",
       "--set:1:6: name: expected a string, got text that is not valid UTF-8"},
      {"InvalidUtf8RankOrder", base(), {"parallelism.rank_order=tp-\xc0\xaf"}, "memory",
       "--set:1:24: parallelism.rank_order: expected a string, got text that is not valid UTF-8"},
      {"InvalidUtf8Schedule", base(), {"parallelism.schedule=\xed\xa0\x80"}, "ettr",
       "--set:1:22: parallelism.schedule: expected one of the Schedule names, got text that is not valid UTF-8"},
      {"UnknownKeyDidYouMean", base(), {"parallelism.tpp=2"}, "simulate",
       "--set:1:13: parallelism: unknown field 'tpp'; did you mean 'tp'?"},
      {"NegativeGpus", base(), {"topology.gpus=-8"}, "memory",
       "--set:1:15: topology.gpus: must not be negative, got -8"},
      {"NanTokens", base(), {"training.tokens=.nan"}, "ettr",
       "--set:1:17: training.tokens: must be a finite number, got '.nan'"},
      {"InfRate", base(), {"fault_tolerance.node_failure_rate_per_day=inf"}, "simulate",
       "--set:1:43: fault_tolerance.node_failure_rate_per_day: must be a finite number, got 'inf'"},
      {"Int32Overflow", base(), {"parallelism.global_batch=3000000000"}, "memory",
       "--set:1:26: parallelism.global_batch: out of range: '3000000000' (at most 2147483647)"},
      {"Int64Overflow", base(), {"training.steps=99999999999999999999"}, "ettr",
       "--set:1:16: training.steps: out of range: '99999999999999999999' (at most 9223372036854775807)"},
      {"DoubleOverflow", base(), {"training.tokens=1e400"}, "simulate",
       "--set:1:17: training.tokens: out of range: '1e400'"},
      {"BareNumberForBandwidth", base(), {"topology.intra_node.bandwidth=300"}, "memory",
       "--set:1:31: topology.intra_node.bandwidth: expected a bandwidth with a unit, such as \"400 GB/s\", got '300'"},
      // perturbations (issue 17): stragglers and degraded links, checked against the topology
      {"PerturbationRankOutsideCluster", base_with("training", "training: {steps: 100}\nperturbations: {slow: [{ranks: [3, 8], slowdown: 1.5}]}"), {}, "simulate",
       "bad.yaml:7:36: perturbations.slow[0].ranks[1]: rank 8 is outside the cluster (0..7)"},
      {"PerturbationSlowdownMissing", base_with("training", "training: {steps: 100}\nperturbations: {slow: [{ranks: [3]}]}"), {}, "simulate",
       "bad.yaml:7:24: perturbations.slow[0].slowdown: missing (compute time multiplier >= 1)"},
      {"PerturbationSlowdownBelowOne", base_with("training", "training: {steps: 100}\nperturbations: {slow: [{ranks: [1], slowdown: 0.5}]}"), {}, "memory",
       "bad.yaml:7:47: perturbations.slow[0].slowdown: must be >= 1 (compute time multiplier), got 0.5"},
      {"PerturbationNicOnOneNode", base_with("training", "training: {steps: 100}\nperturbations: {degraded_links: [{level: nic, node: 0, bandwidth_fraction: 0.5}]}"), {}, "ettr",
       "bad.yaml:7:53: perturbations.degraded_links[0].node: the cluster has one node, so no scale-out link to degrade"},
      {"PerturbationLinkLevelMissing", base_with("training", "training: {steps: 100}\nperturbations: {degraded_links: [{node: 0, bandwidth_fraction: 0.5}]}"), {}, "simulate",
       "bad.yaml:7:34: perturbations.degraded_links[0].level: missing (nvlink, nic or spine)"},
      // heterogeneous GPUs (issue 17): topology.node_hardware, checked against the topology
      {"NodeHardwareNodeOutsideCluster", base(), {"topology.node_hardware=[{nodes: [1], hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"141 GB\", hbm_bandwidth: \"4.8 TB/s\"}}]"}, "simulate",
       "--set:1:34: topology.node_hardware[0].nodes[0]: node 1 is outside the cluster (0..0)"},
      {"NodeHardwareFieldMissing", base(), {"topology.node_hardware=[{nodes: [0], hardware: {name: x, gpu_memory: \"141 GB\", hbm_bandwidth: \"4.8 TB/s\"}}]"}, "memory",
       "--set:1:48: topology.node_hardware[0].hardware.peak_bf16: missing (required), e.g. \"989 TFLOPS\""},
      {"NodeHardwareOtherGpusPerNode", base(), {"topology.node_hardware=[{nodes: [0], gpus_per_node: 4, hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"141 GB\", hbm_bandwidth: \"4.8 TB/s\"}}]"}, "ettr",
       "--set:1:53: topology.node_hardware[0].gpus_per_node: 4 GPUs per node, but topology.gpus_per_node is 8; nodes of different sizes would split TP groups and rails differently, which the placement cannot express"},
      {"NodeHardwareNodeTwice", base(), {"topology.node_hardware=[{nodes: [0, 0], hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"141 GB\", hbm_bandwidth: \"4.8 TB/s\"}}]"}, "simulate",
       "--set:1:37: topology.node_hardware[0].nodes[1]: node 0 already has hardware from this entry"},
      // checkpoint I/O (issue 17): simulated from a storage tier, or given; never both, never ignored
      {"CheckpointSaveTimeAndStorage", base_with("fault", "fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 100, save_time: \"1 s\", storage: {write_bandwidth: \"1 GB/s\"}}}"), {}, "ettr",
       "bad.yaml:5:98: fault_tolerance.checkpoint.save_time: give save_time or storage, not both (storage simulates it)"},
      {"CheckpointStorageWithoutWriteBandwidth", base_with("fault", "fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 100, storage: {read_bandwidth: \"1 GB/s\"}}}"), {}, "memory",
       "bad.yaml:5:96: fault_tolerance.checkpoint.storage.write_bandwidth: missing (required), e.g. \"400 GB/s\""},
      {"DiskWriteBandwidthIgnoredWithSaveTime", base_with("hardware", "hardware: {peak_bf16: \"989 TFLOPS\", gpu_memory: \"80 GiB\", hbm_bandwidth: \"3.35 TB/s\", disk_write_bandwidth: \"2 GB/s\"}"), {}, "simulate",
       "bad.yaml:2:109: hardware.disk_write_bandwidth: changes nothing while fault_tolerance.checkpoint.save_time is given; give checkpoint.storage to simulate the checkpoint I/O, or remove it"},
      {"CheckpointDrainStreamsZero", base_with("fault", "fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 100, mode: async, storage: {write_bandwidth: \"1 GB/s\", drain_streams: 0}}}"), {}, "ettr",
       "bad.yaml:5:152: fault_tolerance.checkpoint.storage.drain_streams: must be at least 1, got 0"},
      {"CheckpointDrainOfABlockingSave", base_with("fault", "fault_tolerance: {node_failure_rate_per_day: 0.005, checkpoint: {interval_steps: 100, storage: {write_bandwidth: \"1 GB/s\", drain_start: \"2 s\"}}}"), {}, "ettr",
       "bad.yaml:5:137: fault_tolerance.checkpoint.storage.drain_start: only used with mode: async (a blocking save has no background drain)"},
  };
}

}  // namespace mofasim::scenario::testing
