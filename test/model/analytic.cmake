# Tests and benchmark of the analytic MoFa step model.
mofasim_add_test(model_analytic_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/analytic_model_test.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/analytic_interference_test.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/analytic_dp_buckets_test.cc
  DEPS mofasim::analytic)
mofasim_add_benchmark(model_analytic_bench
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/analytic_bench.cc
  DEPS mofasim::analytic)
# The priced per-rank plan both step models read.
mofasim_add_test(model_rank_plan_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/rank_plan_test.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/rank_plan_folding_test.cc
       ${CMAKE_CURRENT_SOURCE_DIR}/moe_expert_dp_test.cc
  DEPS mofasim::rank_plan)
# Rank 0's groups on compact clusters and the remembered α–β prices of the plan.
mofasim_add_test(model_rank_plan_groups_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/rank_plan_groups_test.cc
  DEPS mofasim::rank_plan)
# ZeRO-3 / FSDP traffic in the per-rank plan and the closed form.
mofasim_add_test(model_sharded_dp_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/sharded_dp_test.cc
  DEPS mofasim::analytic)
# HSDP: memory and DP traffic of shard groups with replicas (num_distributed_optimizer_instances).
mofasim_add_test(model_hsdp_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/hsdp_test.cc
  DEPS mofasim::rank_plan)
# InternEvo's ZeRO-1 broadcast sync: owner ranks and their priced broadcasts.
mofasim_add_test(model_zero_broadcast_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/zero_broadcast_test.cc
  DEPS mofasim::rank_plan)
# Megatron's account_for_embedding/loss_in_pipeline_split: layers per chunk and per-stage memory.
mofasim_add_test(model_pipeline_split_accounting_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/pipeline_split_accounting_test.cc
  DEPS mofasim::model)
# --cp-comm-type p2p / all_gather / a2a: the CP collectives' bytes in the op table.
mofasim_add_test(model_cp_comm_type_test
  SRCS ${CMAKE_CURRENT_SOURCE_DIR}/cp_comm_type_test.cc
  DEPS mofasim::model)
